package npy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// header is the parsed dictionary of a .npy file.
type header struct {
	descr   string
	fortran bool
	shape   []int
}

// parseHeader reads the Python dict literal that .npy files carry, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
func parseHeader(s string) (header, error) {
	p := &litParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return header{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return header{}, fmt.Errorf("npy: header: trailing text %q", clip(p.s[p.i:]))
	}
	d, ok := v.(map[string]any)
	if !ok {
		return header{}, errors.New("npy: header is not a dict")
	}
	var h header
	seen := 0
	for k, v := range d {
		switch k {
		case "descr":
			s, ok := v.(string)
			if !ok {
				return header{}, errors.New("npy: structured dtypes are not supported (descr is not a string)")
			}
			h.descr = s
		case "fortran_order":
			b, ok := v.(bool)
			if !ok {
				return header{}, errors.New("npy: fortran_order is not a bool")
			}
			h.fortran = b
		case "shape":
			t, ok := v.([]any)
			if !ok {
				return header{}, errors.New("npy: shape is not a tuple")
			}
			for _, e := range t {
				n, ok := e.(int)
				if !ok || n < 0 {
					return header{}, fmt.Errorf("npy: shape entry %v is not a non-negative int", e)
				}
				h.shape = append(h.shape, n)
			}
		default:
			return header{}, fmt.Errorf("npy: unknown header key %q", k)
		}
		seen++
	}
	if seen != 3 {
		return header{}, errors.New("npy: header needs descr, fortran_order and shape")
	}
	return h, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// litParser parses the subset of Python literals NumPy writes: dicts,
// tuples, lists, quoted strings, ints, True and False.
type litParser struct {
	s string
	i int
}

const maxDepth = 8 // a real header nests 2 deep; bounds recursion on junk

func (p *litParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *litParser) errf(format string, args ...any) error {
	return fmt.Errorf("npy: header at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *litParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("nested too deeply")
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict(depth)
	case c == '(' || c == '[':
		return p.seq(depth)
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		j := p.i + 1
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, p.errf("bad int %q", p.s[p.i:j])
		}
		p.i = j
		if p.i < len(p.s) && p.s[p.i] == 'L' { // a Python 2 long, as old files have
			p.i++
		}
		return n, nil
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return nil, p.errf("unexpected %q", p.s[p.i])
}

func (p *litParser) str() (string, error) {
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", p.errf("unterminated string")
	}
	s := p.s[p.i+1 : p.i+1+end]
	if strings.IndexByte(s, '\\') >= 0 {
		return "", p.errf("escapes are not supported")
	}
	p.i += end + 2
	return s, nil
}

func (p *litParser) dict(depth int) (map[string]any, error) {
	p.i++ // {
	d := map[string]any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return d, nil
		}
		if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
			return nil, p.errf("dict key must be a string")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := d[k]; dup {
			return nil, p.errf("duplicate key %q", k)
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errf("missing ':' after %q", k)
		}
		p.i++
		if d[k], err = p.value(depth + 1); err != nil {
			return nil, err
		}
		if err := p.sep('}'); err != nil {
			return nil, err
		}
	}
}

func (p *litParser) seq(depth int) ([]any, error) {
	closer := byte(')')
	if p.s[p.i] == '[' {
		closer = ']'
	}
	p.i++
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if err := p.sep(closer); err != nil {
			return nil, err
		}
	}
}

// sep consumes a comma, or leaves the closing bracket for the caller.
func (p *litParser) sep(closer byte) error {
	p.space()
	switch {
	case p.i < len(p.s) && p.s[p.i] == ',':
		p.i++
		return nil
	case p.i < len(p.s) && p.s[p.i] == closer:
		return nil
	}
	return p.errf("expected ',' or %q", closer)
}
