package kdesc

import (
	"slices"
	"testing"
)

// TestCollapse: hand-worked merges; a broadcast operand blocks merging
// where it restarts.
func TestCollapse(t *testing.T) {
	// [2,3,1,4]: the first operand is contiguous, the second broadcasts
	// over dim 0; dims 1 and 3 merge (dim 2 is size 1) for both.
	dims, st := Collapse([]int{2, 3, 1, 4}, []int{12, 4, 4, 1}, []int{0, 4, 0, 1})
	if !slices.Equal(dims, []int{2, 12}) || !slices.Equal(st[0], []int{12, 1}) || !slices.Equal(st[1], []int{0, 1}) {
		t.Fatalf("Collapse = %v %v, want [2 12] [[12 1] [0 1]]", dims, st)
	}
	// A transposed [3,2] operand merges nothing.
	dims, st = Collapse([]int{2, 3}, []int{1, 2})
	if !slices.Equal(dims, []int{2, 3}) || !slices.Equal(st[0], []int{1, 2}) {
		t.Fatalf("transposed Collapse = %v %v", dims, st)
	}
}

// TestCollapseOffset: every element keeps its offset after collapsing,
// checked against coordinates computed directly from the original dims.
func TestCollapseOffset(t *testing.T) {
	shape := []int{2, 1, 3, 4}
	a := []int{0, 0, 4, 1} // [3,4] broadcast over dim 0
	b := []int{12, 12, 4, 1}
	dims, st := Collapse(shape, a, b)
	for lin := range 24 {
		c := []int{lin / 12, 0, (lin / 4) % 3, lin % 4}
		wa := c[2]*4 + c[3]
		if got := Offset(dims, st[0], lin); got != wa {
			t.Errorf("a offset of %d = %d, want %d", lin, got, wa)
		}
		if got := Offset(dims, st[1], lin); got != lin {
			t.Errorf("b offset of %d = %d, want %d", lin, got, lin)
		}
	}
}

func TestContiguousAndBatchStrides(t *testing.T) {
	if got := Contiguous([]int{2, 3, 4}); !slices.Equal(got, []int{12, 4, 1}) {
		t.Errorf("Contiguous = %v", got)
	}
	// own [5,1] right-aligned under batch [2,5,7]: dim 1 has stride 1,
	// the size-1 dim and the missing leading dim broadcast.
	if got := batchStrides([]int{5, 1}, []int{2, 5, 7}); !slices.Equal(got, []int{0, 1, 0}) {
		t.Errorf("batchStrides = %v, want [0 1 0]", got)
	}
}
