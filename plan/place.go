package plan

import (
	"cmp"
	"math/bits"
	"slices"
)

// block is one arena buffer to place: an aligned size, the closed range
// of schedule positions it is live over, and the offset placement picks.
type block struct {
	id, size   int
	start, end int
	off        int
	peak       int // the most bytes live at any step of this block's lifetime
}

func (a *block) livesWith(b *block) bool { return a.start <= b.end && b.start <= a.end }

// placeNaive puts every block after the previous one, in schedule order.
func placeNaive(bs []block) int {
	top := 0
	for i := range bs {
		bs[i].off = top
		top += bs[i].size
	}
	return top
}

// placeBestFit places the blocks greedily in each of a few orders and
// keeps the smallest arena. Each greedy pass puts a block at the smallest
// gap, between the already placed blocks it is live with, that can hold
// it; the space above those blocks up to the current top counts as a gap
// too, and only when nothing fits does the block go on top.
//
// The orders: blocks of the most crowded steps first (they alone decide
// whether the lower bound is reached, and placed first they pack tightly);
// largest first, the classic order (big blocks are the hardest to fit);
// and longest-lived first, which wins when long-lived residuals would
// otherwise fragment the space. It returns the arena size.
func placeBestFit(bs []block, steps int) int {
	live := liveBytes(bs, steps)
	peak := rangeMax(live)
	for i := range bs {
		bs[i].peak = peak(bs[i].start, bs[i].end)
	}
	life := func(b *block) int { return b.end - b.start + 1 }
	orders := []func(a, b *block) int{
		func(a, b *block) int {
			return cmp.Or(cmp.Compare(b.peak, a.peak), cmp.Compare(b.size, a.size), cmp.Compare(life(b), life(a)), cmp.Compare(a.start, b.start))
		},
		func(a, b *block) int {
			return cmp.Or(cmp.Compare(b.size, a.size), cmp.Compare(life(b), life(a)), cmp.Compare(a.start, b.start))
		},
		func(a, b *block) int {
			return cmp.Or(cmp.Compare(life(b), life(a)), cmp.Compare(b.size, a.size), cmp.Compare(a.start, b.start))
		},
	}
	best, bestTop := make([]int, len(bs)), -1
	idx := make([]int, len(bs))
	for _, order := range orders {
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(i, j int) int { return order(&bs[i], &bs[j]) })
		if top := greedy(bs, idx); bestTop < 0 || top < bestTop {
			bestTop = top
			for i := range bs {
				best[i] = bs[i].off
			}
		}
	}
	for i := range bs {
		bs[i].off = best[i]
	}
	return max(bestTop, 0)
}

// greedy places bs in the order idx (see placeBestFit), setting each
// block's offset, and returns the arena size.
func greedy(bs []block, idx []int) int {
	var placed []*block
	var near []*block // scratch: placed blocks live with the current one
	top := 0
	for _, i := range idx {
		b := &bs[i]
		b.off = 0
		if b.size == 0 {
			continue // takes no bytes, conflicts with nothing
		}
		near = near[:0]
		for _, q := range placed {
			if q.livesWith(b) {
				near = append(near, q)
			}
		}
		slices.SortFunc(near, func(x, y *block) int { return cmp.Compare(x.off, y.off) })
		best, bestGap, cur := -1, 0, 0
		try := func(gapEnd int) {
			if g := gapEnd - cur; g >= b.size && (best < 0 || g < bestGap) {
				best, bestGap = cur, g
			}
		}
		for _, q := range near {
			try(q.off)
			cur = max(cur, q.off+q.size)
		}
		try(top)
		if best < 0 {
			best = cur
		}
		b.off = best
		top = max(top, best+b.size)
		placed = append(placed, b)
	}
	return top
}

// liveBytes is the total size of the blocks live at each position.
func liveBytes(bs []block, steps int) []int {
	live := make([]int, steps+1)
	for _, b := range bs {
		live[b.start] += b.size
		live[b.end+1] -= b.size
	}
	for i := 1; i < len(live); i++ {
		live[i] += live[i-1]
	}
	return live[:steps]
}

// lowerBound is the largest total size of blocks live at one position:
// no placement of these blocks can use less.
func lowerBound(bs []block, steps int) int {
	lb := 0
	for _, v := range liveBytes(bs, steps) {
		lb = max(lb, v)
	}
	return lb
}

// rangeMax answers max(v[i..j]) in constant time from a sparse table, so
// that finding the peak over every block's lifetime stays O(n log n).
func rangeMax(v []int) func(i, j int) int {
	table := [][]int{v}
	for w := 1; 2*w <= len(v); w *= 2 {
		prev := table[len(table)-1]
		next := make([]int, len(prev)-w)
		for i := range next {
			next[i] = max(prev[i], prev[i+w])
		}
		table = append(table, next)
	}
	return func(i, j int) int {
		k := bits.Len(uint(j-i+1)) - 1
		return max(table[k][i], table[k][j-(1<<k)+1])
	}
}
