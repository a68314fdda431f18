package asm

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// goPar is a Par that really runs chunks concurrently, on fresh
// goroutines (tests only: it allocates).
func goPar(threads int) Par {
	return Par{Threads: threads, For: func(n, grain int, body func(lo, hi int)) {
		if n <= 0 {
			return
		}
		chunks := min(threads, (n+max(grain, 1)-1)/max(grain, 1))
		var wg sync.WaitGroup
		for c := range chunks {
			lo, hi := c*n/chunks, (c+1)*n/chunks
			wg.Add(1)
			go func() { defer wg.Done(); body(lo, hi) }()
		}
		wg.Wait()
	}}
}

// naiveTranspose is the definition: output index o (row-major over
// shape[perm[i]]) reads the input at Σ o_i·stride[perm[i]].
func naiveTranspose(src []uint32, shape, perm []int) []uint32 {
	rank := len(shape)
	xs := make([]int, rank)
	n := 1
	for i := rank - 1; i >= 0; i-- {
		xs[i] = n
		n *= shape[i]
	}
	out := make([]uint32, n)
	idx := make([]int, rank)
	for o := range out {
		rem, off := o, 0
		for i := rank - 1; i >= 0; i-- {
			d := shape[perm[i]]
			idx[i] = rem % d
			rem /= d
			off += idx[i] * xs[perm[i]]
		}
		out[o] = src[off]
	}
	return out
}

func checkTranspose(t *testing.T, k *RowKernels, par Par, shape, perm []int) {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	src := make([]uint32, n)
	for i := range src {
		src[i] = uint32(i)*2654435761 + 1 // distinct, and NaN patterns for f32
	}
	tr, err := NewTranspose32(shape, perm, k, par)
	if err != nil {
		t.Fatal(err)
	}
	const g = 9
	buf := make([]uint32, n+2*g+1)
	for i := range buf {
		buf[i] = guardBits
	}
	dst := buf[g+1 : g+1+n : g+1+n] // odd start: not vector aligned
	if err := tr.Run(dst, src); err != nil {
		t.Fatal(err)
	}
	want := naiveTranspose(src, shape, perm)
	for i := range want {
		if dst[i] != want[i] {
			t.Fatalf("%s shape %v perm %v: element %d = %#x, want %#x", k.Name, shape, perm, i, dst[i], want[i])
		}
	}
	for i, v := range buf {
		if (i < g+1 || i >= g+1+n) && v != guardBits {
			t.Fatalf("%s shape %v perm %v: guard word %d overwritten", k.Name, shape, perm, i-g-1)
		}
	}
}

func TestTranspose32Shapes(t *testing.T) {
	cases := []struct{ shape, perm []int }{
		{[]int{1024, 1024}, []int{1, 0}},
		{[]int{67, 131}, []int{1, 0}},
		{[]int{8, 8}, []int{1, 0}},
		{[]int{7, 9}, []int{1, 0}},
		{[]int{1, 200}, []int{1, 0}},
		{[]int{2, 13, 5, 64}, []int{0, 2, 1, 3}}, // attention heads: runs of 64
		{[]int{2, 70, 3, 1}, []int{0, 2, 1, 3}},  // runs of 1: a batched 2-D transpose
		{[]int{3, 4, 5}, []int{2, 0, 1}},
		{[]int{6, 0, 5}, []int{2, 1, 0}},
		{[]int{}, []int{}},
		{[]int{5}, []int{0}},
		{[]int{2, 3, 4, 5, 6}, []int{4, 2, 0, 3, 1}},
		{[]int{33, 2, 65}, []int{2, 1, 0}},
	}
	for _, k := range RowVariants() {
		for _, threads := range []int{1, 3} {
			for _, c := range cases {
				checkTranspose(t, k, goPar(threads), c.shape, c.perm)
			}
		}
	}
}

func TestTranspose32Random(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range RowVariants() {
		for trial := range 200 {
			rank := 1 + r.IntN(5)
			shape := make([]int, rank)
			for i := range shape {
				shape[i] = 1 + r.IntN(9)
				if r.IntN(4) == 0 {
					shape[i] = 1 + r.IntN(90)
				}
			}
			if n := prod(shape); n > 1<<17 {
				continue
			}
			perm := r.Perm(rank)
			t.Run(fmt.Sprint(trial), func(t *testing.T) { checkTranspose(t, k, goPar(1+r.IntN(4)), shape, perm) })
		}
	}
}

func prod(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func TestTranspose32Errors(t *testing.T) {
	if _, err := NewTranspose32([]int{2, 3}, []int{0, 0}, nil, Par{}); err == nil {
		t.Error("repeated perm accepted")
	}
	if _, err := NewTranspose32([]int{2, 3}, []int{1}, nil, Par{}); err == nil {
		t.Error("short perm accepted")
	}
	tr, err := NewTranspose32([]int{4, 4}, []int{1, 0}, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(make([]uint32, 15), make([]uint32, 16)); err == nil {
		t.Error("short dst accepted")
	}
	buf := make([]uint32, 20)
	if err := tr.Run(buf[4:], buf[:16]); err == nil {
		t.Error("overlap accepted")
	}
}
