package msl

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// broadcastOffset is numpy's rule written directly: the input element of
// output index lin, for an input of shape in right-aligned to out.
func broadcastOffset(in, out []int, lin int) int {
	coord := make([]int, len(out))
	for d := len(out) - 1; d >= 0; d-- {
		coord[d] = lin % out[d]
		lin /= out[d]
	}
	off, stride := 0, 1
	for d := len(in) - 1; d >= 0; d-- {
		c := coord[len(out)-len(in)+d]
		if in[d] == 1 {
			c = 0
		}
		off += c * stride
		stride *= in[d]
	}
	return off
}

// randomBroadcast makes an output shape and an input shape broadcasting to it.
func randomBroadcast(r *rand.Rand) (in, out []int) {
	rank := r.IntN(5)
	for range rank {
		out = append(out, 1+r.IntN(4))
	}
	drop := r.IntN(rank + 1)
	for d := drop; d < rank; d++ {
		n := out[d]
		if r.IntN(3) == 0 {
			n = 1
		}
		in = append(in, n)
	}
	return in, out
}

// TestCollapseOffset: after collapsing, Offset still finds every
// broadcast input element numpy's rule finds, for two operands at once.
func TestCollapseOffset(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 400 {
		a, out := randomBroadcast(r)
		b := append([]int(nil), out...)
		sa, sb := tensor.BroadcastStrides(a, out), tensor.BroadcastStrides(b, out)
		dims, st := Collapse(out, sa, sb)
		if product(dims) != product(out) {
			t.Fatalf("collapse(%v) = %v changes the element count", out, dims)
		}
		for lin := range product(out) {
			if got, want := Offset(dims, st[0], lin), broadcastOffset(a, out, lin); got != want {
				t.Fatalf("in %v out %v: element %d at %d, want %d (dims %v strides %v)", a, out, lin, got, want, dims, st[0])
			}
			if got := Offset(dims, st[1], lin); got != lin {
				t.Fatalf("contiguous operand: element %d at %d", lin, got)
			}
		}
	}
}

// TestCollapseMerges: contiguous runs become one dim (hand-worked).
func TestCollapseMerges(t *testing.T) {
	dims, st := Collapse([]int{2, 3, 1, 4}, []int{12, 4, 4, 1}, []int{0, 4, 0, 1})
	if len(dims) != 2 || dims[0] != 2 || dims[1] != 12 || st[0][0] != 12 || st[0][1] != 1 || st[1][0] != 0 || st[1][1] != 1 {
		t.Errorf("got dims %v strides %v, want [2 12] [[12 1] [0 1]]", dims, st)
	}
}

// runOffsetCode interprets the statements offsetCode writes (int
// declarations, % and /= by constants, += products) for one linear index.
func runOffsetCode(t *testing.T, code, lin string, linVal int) map[string]int {
	t.Helper()
	vars := map[string]int{lin: linVal}
	val := func(s string) int {
		if v, err := strconv.Atoi(s); err == nil {
			return v
		}
		if v, ok := vars[s]; ok {
			return v
		}
		t.Fatalf("unknown operand %q in\n%s", s, code)
		return 0
	}
	decl := regexp.MustCompile(`^int (\w+) = (?:int\((\w+)\)|(-?\w+))$`)
	mod := regexp.MustCompile(`^int (\w+) = (\w+) % (\d+)$`)
	div := regexp.MustCompile(`^(\w+) /= (\d+)$`)
	acc := regexp.MustCompile(`^(\w+) \+= (\w+) \* (-?\d+)$`)
	for line := range strings.SplitSeq(code, "\n") {
		for st := range strings.SplitSeq(strings.Trim(strings.TrimSpace(line), "{}"), ";") {
			st = strings.TrimSpace(st)
			switch {
			case st == "":
			case mod.MatchString(st):
				m := mod.FindStringSubmatch(st)
				vars[m[1]] = val(m[2]) % val(m[3])
			case decl.MatchString(st):
				m := decl.FindStringSubmatch(st)
				vars[m[1]] = val(m[2] + m[3])
			case div.MatchString(st):
				m := div.FindStringSubmatch(st)
				vars[m[1]] /= val(m[2])
			case acc.MatchString(st):
				m := acc.FindStringSubmatch(st)
				vars[m[1]] += val(m[2]) * val(m[3])
			default:
				t.Fatalf("statement %q is not one offsetCode writes", st)
			}
		}
	}
	return vars
}

// TestOffsetCode: the MSL index arithmetic, interpreted, agrees with
// numpy's broadcast rule for every element, bases included.
func TestOffsetCode(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 150 {
		a, out := randomBroadcast(r)
		dims, st := Collapse(out, tensor.BroadcastStrides(a, out))
		code := offsetCode("    ", "gid", dims, st, []string{"o0"}, []int{7})
		for lin := range product(out) {
			if got, want := runOffsetCode(t, code, "gid", lin)["o0"], 7+broadcastOffset(a, out, lin); got != want {
				t.Fatalf("in %v out %v element %d: code gives %d, want %d\n%s", a, out, lin, got, want, code)
			}
		}
	}
}

// TestCopySource: transpose, negative-step slice and tile read the
// hand-worked input elements.
func TestCopySource(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3) // x[i][j] at 3i+j
	cases := []struct {
		n    *graph.Node
		want []int
	}{
		{g.Transpose(x, 1, 0), []int{0, 3, 1, 4, 2, 5}},
		{g.Slice(x, graph.SliceSpec{Starts: []int{2}, Ends: []int{-4}, Axes: []int{1}, Steps: []int{-1}}), []int{2, 1, 0, 5, 4, 3}},
		{g.Tile(x, 2, 1), []int{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}},
		{g.Expand(g.Input("y", tensor.F32, 3, 1), 3, 2), []int{0, 0, 1, 1, 2, 2}},
	}
	for _, tc := range cases {
		if g.Err() != nil {
			t.Fatal(g.Err())
		}
		c, err := kdesc.CopyOf("k", tc.n)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range tc.want {
			if got := c.CopySource(i); got != w {
				t.Errorf("%s element %d reads %d, want %d", tc.n, i, got, w)
			}
		}
	}
}

// TestPadSource: hand-worked reflect (numpy "reflect"), edge and constant
// mappings of a 3-long dim.
func TestPadSource(t *testing.T) {
	type want struct {
		c  int
		ok bool
	}
	cases := map[graph.PadMode]map[int]want{
		graph.PadReflect:  {-2: {2, true}, -1: {1, true}, 0: {0, true}, 2: {2, true}, 3: {1, true}, 4: {0, true}, 5: {1, true}},
		graph.PadEdge:     {-2: {0, true}, 1: {1, true}, 3: {2, true}, 9: {2, true}},
		graph.PadConstant: {-1: {0, false}, 0: {0, true}, 2: {2, true}, 3: {0, false}},
	}
	for mode, m := range cases {
		for c, w := range m {
			if got, ok := PadSource(mode, c, 3); ok != w.ok || (ok && got != w.c) {
				t.Errorf("%v(%d) = %d,%v want %d,%v", mode, c, got, ok, w.c, w.ok)
			}
		}
	}
}

// TestConvSource: stride 2, pad 1, dilation 2 on a 5×5 input (hand-worked).
func TestConvSource(t *testing.T) {
	c := &Conv{Window: kdesc.Window{H: 5, W: 5, SH: 2, SW: 2, PT: 1, PL: 1, DH: 2, DW: 2}}
	for _, tc := range []struct {
		oy, ox, ky, kx, iy, ix int
		ok                     bool
	}{
		{0, 0, 0, 0, -1, -1, false},
		{0, 0, 1, 1, 1, 1, true},
		{1, 2, 2, 0, 5, 3, false},
		{1, 1, 1, 2, 3, 5, false},
		{2, 1, 0, 1, 3, 3, true},
	} {
		iy, ix, ok := c.Source(tc.oy, tc.ox, tc.ky, tc.kx)
		if iy != tc.iy || ix != tc.ix || ok != tc.ok {
			t.Errorf("Source(%d,%d,%d,%d) = %d,%d,%v want %d,%d,%v", tc.oy, tc.ox, tc.ky, tc.kx, iy, ix, ok, tc.iy, tc.ix, tc.ok)
		}
	}
}
