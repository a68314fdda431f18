package tensor

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestNumElementsAndStrides(t *testing.T) {
	tests := []struct {
		s       Shape
		n       int
		strides []int
	}{
		{nil, 1, []int{}},
		{Shape{}, 1, []int{}},
		{Shape{5}, 5, []int{1}},
		{Shape{2, 3, 4}, 24, []int{12, 4, 1}},
		{Shape{0, 3}, 0, []int{3, 1}},
		{Shape{3, 0, 2}, 0, []int{0, 2, 1}},
		{Shape{1, 1, 7}, 7, []int{7, 7, 1}},
	}
	for _, tc := range tests {
		if got := tc.s.NumElements(); got != tc.n {
			t.Errorf("%v.NumElements() = %d, want %d", tc.s, got, tc.n)
		}
		if got := tc.s.Strides(); !slices.Equal(got, tc.strides) {
			t.Errorf("%v.Strides() = %v, want %v", tc.s, got, tc.strides)
		}
		if tc.s.Rank() != len(tc.s) {
			t.Errorf("%v.Rank() = %d", tc.s, tc.s.Rank())
		}
	}
}

func TestValidate(t *testing.T) {
	ok := []Shape{nil, {}, {0}, {1 << 23, 1 << 23}, {MaxElements}, {0, MaxElements}, {MaxElements, 0, 1}}
	for _, s := range ok {
		if err := s.Validate(); err != nil {
			t.Errorf("%v: %v", s, err)
		}
	}
	bad := []struct {
		s    Shape
		want string
	}{
		{Shape{-1}, "negative"},
		{Shape{2, -3}, "negative"},
		{Shape{0, -1}, "negative"},
		{Shape{MaxElements + 1}, "more than"},
		{Shape{1 << 30, 1 << 30}, "more than"},
		{Shape{1 << 23, 1 << 23, 2}, "more than"},
		// Zero dims do not excuse huge others: the answer must not depend
		// on where the zero sits, and Strides would overflow.
		{Shape{1 << 40, 0, 1 << 40}, "more than"},
		{Shape{0, 1 << 62}, "more than"},
		{Shape{1 << 62, 0}, "more than"},
		{Shape{1 << 62, 1 << 62, 4}, "more than"}, // product would wrap around int
	}
	for _, tc := range bad {
		err := tc.s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.s, err, tc.want)
		}
	}
}

func TestShapeEqualCloneString(t *testing.T) {
	s := Shape{2, 3}
	c := s.Clone()
	c[0] = 9
	if s[0] != 2 {
		t.Error("Clone shares memory")
	}
	if !s.Equal(Shape{2, 3}) || s.Equal(Shape{2}) || s.Equal(Shape{3, 2}) || !Shape(nil).Equal(Shape{}) {
		t.Error("Equal")
	}
	if Shape(nil).Clone() != nil {
		t.Error("Clone(nil) is not nil")
	}
	if s.String() != "[2 3]" || Shape(nil).String() != "[]" {
		t.Errorf("String: %s %s", s, Shape(nil))
	}
}

func TestNormAxis(t *testing.T) {
	tests := []struct{ axis, rank, want int }{
		{0, 1, 0}, {-1, 3, 2}, {2, 3, 2}, {-3, 3, 0},
	}
	for _, tc := range tests {
		if got, err := NormAxis(tc.axis, tc.rank); err != nil || got != tc.want {
			t.Errorf("NormAxis(%d, %d) = %d, %v; want %d", tc.axis, tc.rank, got, err, tc.want)
		}
	}
	for _, tc := range [][2]int{{3, 3}, {-4, 3}, {0, 0}, {-1, 0}} {
		if _, err := NormAxis(tc[0], tc[1]); err == nil {
			t.Errorf("NormAxis(%d, %d) accepted", tc[0], tc[1])
		}
	}
}

func TestBroadcast(t *testing.T) {
	tests := []struct {
		in   []Shape
		want Shape // nil: an error is expected
	}{
		// Examples from the numpy broadcasting documentation.
		{[]Shape{{256, 256, 3}, {3}}, Shape{256, 256, 3}},
		{[]Shape{{8, 1, 6, 1}, {7, 1, 5}}, Shape{8, 7, 6, 5}},
		{[]Shape{{5, 4}, {1}}, Shape{5, 4}},
		{[]Shape{{5, 4}, {4}}, Shape{5, 4}},
		{[]Shape{{15, 3, 5}, {15, 1, 5}}, Shape{15, 3, 5}},
		{[]Shape{{15, 3, 5}, {3, 5}}, Shape{15, 3, 5}},
		{[]Shape{{15, 3, 5}, {3, 1}}, Shape{15, 3, 5}},
		{[]Shape{{3}, {4}}, nil},
		{[]Shape{{2, 1}, {8, 4, 3}}, nil},
		// Scalars.
		{[]Shape{{}, {2, 3}}, Shape{2, 3}},
		{[]Shape{{2, 3}, nil}, Shape{2, 3}},
		{[]Shape{{}, {}}, Shape{}},
		{[]Shape{}, Shape{}},
		{[]Shape{{1}, {}}, Shape{1}},
		// Zero dims broadcast like any other size: only 1 stretches.
		{[]Shape{{0}, {1}}, Shape{0}},
		{[]Shape{{1}, {0}}, Shape{0}},
		{[]Shape{{0}, {3}}, nil},
		{[]Shape{{3}, {0}}, nil},
		{[]Shape{{2, 0}, {0}}, Shape{2, 0}},
		{[]Shape{{4, 1}, {0}}, Shape{4, 0}},
		// More than two shapes.
		{[]Shape{{2, 1, 1}, {1, 3, 1}, {4}}, Shape{2, 3, 4}},
		{[]Shape{{2, 1}, {1, 3}, {2, 4}}, nil},
	}
	for _, tc := range tests {
		got, err := Broadcast(tc.in...)
		if tc.want == nil {
			if err == nil {
				t.Errorf("Broadcast%v = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) || got == nil {
			t.Errorf("Broadcast%v = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	// The inputs are not modified and the result does not alias them.
	a := Shape{3, 1}
	out, _ := Broadcast(a, Shape{3, 4})
	out[0] = 99
	if a[0] != 3 {
		t.Error("Broadcast result aliases an input")
	}
}

func TestBroadcastStrides(t *testing.T) {
	tests := []struct {
		s, out Shape
		want   []int
	}{
		{Shape{3}, Shape{2, 3}, []int{0, 1}},
		{Shape{2, 1}, Shape{2, 3}, []int{1, 0}},
		{Shape{}, Shape{2, 3}, []int{0, 0}},
		{Shape{4, 1, 3}, Shape{2, 4, 5, 3}, []int{0, 3, 0, 1}},
		{Shape{2, 3}, Shape{2, 3}, []int{3, 1}},
		{Shape{}, Shape{}, []int{}},
	}
	for _, tc := range tests {
		if got := BroadcastStrides(tc.s, tc.out); !slices.Equal(got, tc.want) {
			t.Errorf("BroadcastStrides(%v, %v) = %v, want %v", tc.s, tc.out, got, tc.want)
		}
	}
}

// TestBroadcastStridesIndexing checks the strides against the definition:
// element idx of the broadcast reads element (idx[i] mod s[i]) of s.
func TestBroadcastStridesIndexing(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		rank := r.IntN(5)
		out := make(Shape, rank)
		s := make(Shape, r.IntN(rank+1))
		for i := range out {
			out[i] = 1 + r.IntN(4)
		}
		off := rank - len(s)
		for i := range s {
			s[i] = out[off+i]
			if r.IntN(2) == 0 {
				s[i] = 1
			}
		}
		if b, err := Broadcast(s, out); err != nil || !b.Equal(out) {
			t.Fatalf("Broadcast(%v, %v) = %v, %v", s, out, b, err)
		}
		st, own := BroadcastStrides(s, out), s.Strides()
		idx := make([]int, rank)
		for range out.NumElements() {
			got, want := 0, 0
			for i := range idx {
				got += idx[i] * st[i]
			}
			for i := range s {
				want += (idx[off+i] % s[i]) * own[i]
			}
			if got != want {
				t.Fatalf("%v as %v at %v: offset %d, want %d", s, out, idx, got, want)
			}
			for i := rank - 1; i >= 0; i-- { // next index, row-major
				if idx[i]++; idx[i] < out[i] {
					break
				}
				idx[i] = 0
			}
		}
	}
}

func TestTrimLeadingOnes(t *testing.T) {
	for _, c := range []struct {
		s    Shape
		rank int
		want Shape
	}{
		{Shape{1, 1, 6, 33}, 0, Shape{6, 33}},
		{Shape{1, 1, 6, 33}, 3, Shape{1, 6, 33}},
		{Shape{1, 1, 1}, 0, Shape{}},
		{Shape{1, 1, 1}, 2, Shape{1, 1}},
		{Shape{2, 1, 3}, 0, Shape{2, 1, 3}}, // only leading ones
		{Shape{}, 0, Shape{}},
	} {
		if got := c.s.TrimLeadingOnes(c.rank); !got.Equal(c.want) {
			t.Errorf("%v.TrimLeadingOnes(%d) = %v, want %v", c.s, c.rank, got, c.want)
		}
	}
}
