package ptx

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ModuleInfo is what Parse reads from a PTX module: enough to load it
// and to check launch arguments, not a full PTX parser.
type ModuleInfo struct {
	Version      string // e.g. "7.8"
	Major, Minor int
	Targets      []string // e.g. ["sm_80"]; the first is the architecture
	AddressSize  int      // 64 (32 is not supported by kiln)
	Entries      []Entry
}

// Entry is a kernel's signature.
type Entry struct {
	Name   string
	Params []Param
}

// Entry finds a kernel by name.
func (m *ModuleInfo) Entry(name string) (*Entry, error) {
	for i := range m.Entries {
		if m.Entries[i].Name == name {
			return &m.Entries[i], nil
		}
	}
	names := make([]string, len(m.Entries))
	for i, e := range m.Entries {
		names[i] = e.Name
	}
	return nil, fmt.Errorf("ptx: no entry %q in the module (entries: %s)", name, strings.Join(names, ", "))
}

// Arch is the module's sm_XX target as a number (80 for sm_80), or 0.
func (m *ModuleInfo) Arch() int {
	if len(m.Targets) == 0 {
		return 0
	}
	t := strings.TrimSuffix(strings.TrimSuffix(m.Targets[0], "a"), "f")
	n, _ := strconv.Atoi(strings.TrimPrefix(t, "sm_"))
	return n
}

// Parse reads a PTX module's .version, .target, .address_size and the
// parameter lists of its .entry directives. Function bodies are skipped
// by brace matching; .func declarations are ignored.
func Parse(src string) (*ModuleInfo, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	m := &ModuleInfo{}
	p := &parser{toks: toks}
	for !p.eof() {
		switch t := p.next(); t {
		case ".version":
			v := p.next()
			maj, min, ok := strings.Cut(v, ".")
			a, err1 := strconv.Atoi(maj)
			b, err2 := strconv.Atoi(min)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("ptx: bad .version %q", v)
			}
			m.Version, m.Major, m.Minor = v, a, b
		case ".target":
			m.Targets = append(m.Targets, p.next())
			for p.peek() == "," {
				p.next()
				m.Targets = append(m.Targets, p.next())
			}
		case ".address_size":
			n, err := strconv.Atoi(p.next())
			if err != nil {
				return nil, fmt.Errorf("ptx: bad .address_size")
			}
			m.AddressSize = n
		case ".entry":
			e, err := p.entry()
			if err != nil {
				return nil, err
			}
			m.Entries = append(m.Entries, e)
		case "{":
			if err := p.skipBlock(); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case m.Version == "":
		return nil, fmt.Errorf("ptx: module has no .version directive")
	case len(m.Targets) == 0:
		return nil, fmt.Errorf("ptx: module has no .target directive")
	case m.AddressSize != 0 && m.AddressSize != 64:
		return nil, fmt.Errorf("ptx: .address_size %d: kiln needs 64-bit addresses", m.AddressSize)
	}
	return m, nil
}

type parser struct {
	toks []string
	i    int
}

func (p *parser) eof() bool { return p.i >= len(p.toks) }

func (p *parser) peek() string {
	if p.eof() {
		return ""
	}
	return p.toks[p.i]
}

func (p *parser) next() string {
	t := p.peek()
	p.i++
	return t
}

// skipBlock skips to the brace matching an already consumed "{".
func (p *parser) skipBlock() error {
	depth := 1
	for !p.eof() {
		switch p.next() {
		case "{":
			depth++
		case "}":
			if depth--; depth == 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("ptx: unbalanced braces")
}

// entry parses `name ( .param ..., ... )` after `.entry`.
func (p *parser) entry() (Entry, error) {
	e := Entry{Name: p.next()}
	if !isIdent(e.Name) {
		return e, fmt.Errorf("ptx: bad entry name %q", e.Name)
	}
	if p.peek() != "(" {
		return e, nil // no parameter list
	}
	p.next()
	for {
		switch t := p.next(); t {
		case ")":
			return e, nil
		case ",":
		case ".param":
			prm, err := p.param()
			if err != nil {
				return e, fmt.Errorf("ptx: entry %s: %w", e.Name, err)
			}
			e.Params = append(e.Params, prm)
		case "":
			return e, fmt.Errorf("ptx: entry %s: unterminated parameter list", e.Name)
		default:
			return e, fmt.Errorf("ptx: entry %s: unexpected %q in the parameter list", e.Name, t)
		}
	}
}

// param parses the rest of one `.param` declaration.
func (p *parser) param() (Param, error) {
	var prm Param
	ptr := false // after .ptr, .align is the pointee's alignment
	for {
		t := p.peek()
		switch {
		case t == "," || t == ")" || t == "":
			if prm.Type == "" || prm.Name == "" {
				return prm, fmt.Errorf("incomplete parameter")
			}
			return prm, nil
		case t == ".align":
			p.next()
			n, err := strconv.Atoi(p.next())
			if err != nil || n <= 0 || n&(n-1) != 0 {
				return prm, fmt.Errorf("bad .align")
			}
			if !ptr {
				prm.Align = n
			}
		case t == ".ptr" || t == ".global" || t == ".const" || t == ".local" || t == ".shared":
			p.next() // pointer attributes do not change the layout
			ptr = ptr || t == ".ptr"
		case strings.HasPrefix(t, "."):
			p.next()
			if Type(t).Size() == 0 {
				return prm, fmt.Errorf("unsupported parameter type %s", t)
			}
			prm.Type = Type(t)
		case t == "[":
			p.next()
			n, err := strconv.Atoi(p.next())
			if err != nil || n <= 0 || p.next() != "]" {
				return prm, fmt.Errorf("bad array size for %s", prm.Name)
			}
			prm.Count = n
		case isIdent(t):
			p.next()
			prm.Name = t
		default:
			return prm, fmt.Errorf("unexpected %q", t)
		}
	}
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '$' || r == '%' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// tokenize splits PTX into identifiers/directives/numbers and single
// punctuation, dropping comments and string literals.
func tokenize(src string) ([]string, error) {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("ptx: unterminated comment")
			}
			i += end + 4
		case c == '"':
			end := strings.IndexByte(src[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("ptx: unterminated string")
			}
			i += end + 2
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("(){}[],;:<>+-=@!|", c) >= 0:
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(src) && strings.IndexByte(" \t\n\r(){}[],;:<>+-=@!|/\"", src[j]) < 0 {
				j++
			}
			tok := src[i:j]
			if strings.HasPrefix(tok, ".") && strings.Count(tok, ".") > 1 {
				// Chained qualifiers (.ptr.global.align) are separate words.
				for _, part := range strings.Split(tok[1:], ".") {
					toks = append(toks, "."+part)
				}
			} else {
				toks = append(toks, tok)
			}
			i = j
		}
	}
	return toks, nil
}
