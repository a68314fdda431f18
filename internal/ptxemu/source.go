package ptxemu

import (
	"fmt"
	"strings"
)

// stmt is one statement of an entry body: a directive, an instruction or
// a label (text ends with ':'), with the line it starts on.
type stmt struct {
	text string
	line int
}

// rawEntry is an entry's name and body statements, before decoding.
type rawEntry struct {
	name string
	line int
	body []stmt
}

// stripComments blanks // and /* */ comments (keeping newlines, so byte
// offsets still map to lines) and string literals' contents.
func stripComments(src string) (string, error) {
	b := []byte(src)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return "", fmt.Errorf("emu: line %d: unterminated comment", lineAt(src, i))
			}
			for j := i; j < i+end+4; j++ {
				if b[j] != '\n' {
					b[j] = ' '
				}
			}
			i += end + 3
		case b[i] == '"':
			end := strings.IndexByte(src[i+1:], '"')
			if end < 0 {
				return "", fmt.Errorf("emu: line %d: unterminated string", lineAt(src, i))
			}
			i += end + 1
		}
	}
	return string(b), nil
}

func lineAt(src string, off int) int { return strings.Count(src[:off], "\n") + 1 }

// token is a word or punctuation of the module's top level.
type token struct {
	s   string
	off int
}

func topTokens(src string) []token {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("(){}[],;:<>+-=@!|", c) >= 0:
			toks = append(toks, token{string(c), i})
			i++
		case c == '"':
			j := strings.IndexByte(src[i+1:], '"')
			if j < 0 {
				j = len(src) - i - 2
			}
			toks = append(toks, token{src[i : i+j+2], i})
			i += j + 2
		default:
			j := i
			for j < len(src) && strings.IndexByte(" \t\n\r(){}[],;:<>+-=@!|\"", src[j]) < 0 {
				j++
			}
			toks = append(toks, token{src[i:j], i})
			i = j
		}
	}
	return toks
}

// splitModule finds every .entry and cuts its body into statements.
// Module-scope variables are rejected (kiln never emits them); .func
// definitions are skipped (a call to one is rejected when decoded).
func splitModule(src string) ([]rawEntry, error) {
	s, err := stripComments(src)
	if err != nil {
		return nil, err
	}
	toks := topTokens(s)
	var out []rawEntry
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.s {
		case ".version", ".address_size":
			i++
		case ".target":
			for i++; i+2 < len(toks) && toks[i+1].s == ","; i += 2 {
			}
		case ".visible", ".extern", ".weak":
		case ".entry":
			if i+1 >= len(toks) {
				return nil, fmt.Errorf("emu: line %d: .entry without a name", lineAt(s, t.off))
			}
			name := toks[i+1].s
			open := -1
			for j := i + 2; j < len(toks); j++ {
				if toks[j].s == "{" {
					open = j
					break
				}
				if toks[j].s == ";" && toks[j-1].s == ")" {
					break // a declaration without a body
				}
			}
			if open < 0 {
				return nil, fmt.Errorf("emu: line %d: entry %s has no body", lineAt(s, t.off), name)
			}
			close, err := matchBrace(toks, open)
			if err != nil {
				return nil, fmt.Errorf("emu: entry %s: %w", name, err)
			}
			start := toks[open].off + 1
			body := splitBody(s[start:toks[close].off], lineAt(s, start))
			out = append(out, rawEntry{name: name, line: lineAt(s, t.off), body: body})
			i = close
		case ".func":
			j := i + 1
			for ; j < len(toks) && toks[j].s != "{" && toks[j].s != ";"; j++ {
			}
			if j < len(toks) && toks[j].s == "{" {
				c, err := matchBrace(toks, j)
				if err != nil {
					return nil, err
				}
				j = c
			}
			i = j
		case ".global", ".shared", ".const", ".local", ".tex", ".surfref", ".texref", ".samplerref":
			return nil, fmt.Errorf("emu: line %d: module-scope %s variables are not supported", lineAt(s, t.off), t.s)
		case ".file", ".section", ".loc", ".pragma":
			for ; i+1 < len(toks) && lineAt(s, toks[i+1].off) == lineAt(s, t.off); i++ {
			}
		default:
			return nil, fmt.Errorf("emu: line %d: unsupported module-level %q", lineAt(s, t.off), t.s)
		}
	}
	return out, nil
}

func matchBrace(toks []token, open int) (int, error) {
	depth := 0
	for j := open; j < len(toks); j++ {
		switch toks[j].s {
		case "{":
			depth++
		case "}":
			if depth--; depth == 0 {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced braces")
}

// splitBody cuts a body into statements: labels, directives and
// instructions; scope braces are dropped (registers are entry-wide).
func splitBody(body string, line0 int) []stmt {
	var out []stmt
	line := line0
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '{' || c == '}' || c == ';':
			i++
			continue
		}
		// A label: an identifier directly followed by ':' (not "::").
		j := i
		for j < len(body) && isIdentByte(body[j]) {
			j++
		}
		k := j
		for k < len(body) && (body[k] == ' ' || body[k] == '\t') {
			k++
		}
		if j > i && k < len(body) && body[k] == ':' && (k+1 >= len(body) || body[k+1] != ':') {
			out = append(out, stmt{text: body[i:j] + ":", line: line})
			i = k + 1
			continue
		}
		end := strings.IndexByte(body[i:], ';')
		if end < 0 {
			end = len(body) - i
		}
		text := body[i : i+end]
		out = append(out, stmt{text: strings.Join(strings.Fields(text), " "), line: line})
		line += strings.Count(text, "\n")
		i += end + 1
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c == '%' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
