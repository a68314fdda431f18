package plan

import (
	"math/rand/v2"
	"testing"
)

func TestParseEnv(t *testing.T) {
	for v, want := range map[string]bool{"naive": true, " NAIVE\n": true, "": false, "bestfit": false, "naiv": false} {
		if got := parseEnv(v).Naive; got != want {
			t.Errorf("parseEnv(%q).Naive = %v, want %v", v, got, want)
		}
	}
}

func TestRangeMax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		v := make([]int, n)
		for i := range v {
			v[i] = r.IntN(100)
		}
		q := rangeMax(v)
		for i := range n {
			want := -1
			for j := i; j < n; j++ {
				want = max(want, v[j])
				if got := q(i, j); got != want {
					t.Fatalf("n %d: max(v[%d..%d]) = %d, want %d", n, i, j, got, want)
				}
			}
		}
	}
}

// TestBestFitBlocks places random block sets and checks, by brute force
// over every step, that no two live blocks overlap and that the arena is
// at least the live bytes of every step; on instances small enough, it
// also compares with the optimum found by exhaustive search.
func TestBestFitBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	worst := 1.0
	for trial := range 300 {
		steps := 2 + r.IntN(12)
		bs := make([]block, 1+r.IntN(7))
		for i := range bs {
			s := r.IntN(steps)
			bs[i] = block{id: i, size: 64 * r.IntN(5), start: s, end: s + r.IntN(steps-s)}
		}
		top := placeBestFit(bs, steps)
		for i := range bs {
			a := bs[i]
			if a.off%64 != 0 || a.off < 0 || a.off+a.size > top {
				t.Fatalf("trial %d: block %+v outside [0, %d) or misaligned", trial, a, top)
			}
			for _, b := range bs[i+1:] {
				if a.size > 0 && b.size > 0 && a.livesWith(&b) && a.off < b.off+b.size && b.off < a.off+a.size {
					t.Fatalf("trial %d: live blocks %+v and %+v overlap", trial, a, b)
				}
			}
		}
		for s := range steps {
			live := 0
			for _, b := range bs {
				if b.start <= s && s <= b.end {
					live += b.size
				}
			}
			if top < live {
				t.Fatalf("trial %d: arena %d below the %d bytes live at step %d", trial, top, live, s)
			}
			if lb := lowerBound(bs, steps); lb < live {
				t.Fatalf("trial %d: lower bound %d below the %d bytes live at step %d", trial, lb, live, s)
			}
		}
		if opt := optimum(bs); top < opt {
			t.Fatalf("trial %d: arena %d below the optimum %d: the search or the check is wrong", trial, top, opt)
		} else if opt > 0 {
			worst = max(worst, float64(top)/float64(opt))
		}
	}
	t.Logf("worst best-fit/optimum ratio on small instances: %.3f", worst)
	if worst > 1.5 {
		t.Errorf("best fit up to %.2fx the optimum on tiny instances", worst)
	}
}

// optimum finds the smallest arena by trying every offset (in units of
// 64) for every block, bounded by the naive sum.
func optimum(bs []block) int {
	total := 0
	for _, b := range bs {
		total += b.size
	}
	best := total
	off := make([]int, len(bs))
	var try func(i, top int)
	try = func(i, top int) {
		if top >= best {
			return
		}
		if i == len(bs) {
			best = top
			return
		}
		for o := 0; o+bs[i].size <= best; o += 64 {
			ok := true
			for j := range i {
				if bs[i].size > 0 && bs[j].size > 0 && bs[i].livesWith(&bs[j]) && o < off[j]+bs[j].size && off[j] < o+bs[i].size {
					ok = false
					break
				}
			}
			if ok {
				off[i] = o
				try(i+1, max(top, o+bs[i].size))
			}
			if bs[i].size == 0 {
				break
			}
		}
	}
	try(0, 0)
	return best
}
