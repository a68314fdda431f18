package tensor

import "testing"

// fuzzShapes decodes 2 or 3 shapes of rank 0-4 with dims 0-4 (1 common,
// so that shapes often broadcast) from the fuzz bytes.
func fuzzShapes(b []byte) []Shape {
	next := func() int {
		if len(b) == 0 {
			return 0
		}
		c := int(b[0])
		b = b[1:]
		return c
	}
	shapes := make([]Shape, 2+next()%2)
	for i := range shapes {
		s := make(Shape, next()%5)
		for j := range s {
			s[j] = []int{1, 1, 1, 2, 3, 4, 0, 5}[next()%8]
		}
		shapes[i] = s
	}
	return shapes
}

// broadcastRef is the NumPy rule written per output axis: right-align the
// shapes; the axis is the one size other than 1 among them (1 if none),
// and the shapes are incompatible when two different sizes other than 1
// meet.
func broadcastRef(shapes []Shape) (Shape, bool) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(Shape, rank)
	for ax := range rank {
		size := 1
		for _, s := range shapes {
			i := len(s) - rank + ax
			if i < 0 || s[i] == 1 {
				continue
			}
			if size != 1 && size != s[i] {
				return nil, false
			}
			size = s[i]
		}
		out[ax] = size
	}
	return out, true
}

// FuzzBroadcast compares Broadcast of 2-3 shapes with broadcastRef and
// checks BroadcastStrides: walking the output by index, the strided
// offset into each input must be the row-major offset of the index with
// the broadcast axes pinned to 0.
func FuzzBroadcast(f *testing.F) {
	f.Add([]byte{0, 2, 2, 3, 1, 3})
	f.Add([]byte{1, 3, 1, 4, 5, 2, 4, 1, 0})
	f.Add([]byte{0, 1, 6, 1, 0})
	f.Add([]byte{1, 0, 4, 3, 4, 4, 4, 2, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		shapes := fuzzShapes(data)
		got, err := Broadcast(shapes...)
		want, ok := broadcastRef(shapes)
		if ok != (err == nil) {
			t.Fatalf("Broadcast%v: got %v, %v; want ok=%v", shapes, got, err, ok)
		}
		if !ok {
			return
		}
		if !got.Equal(want) || len(got) != len(want) {
			t.Fatalf("Broadcast%v = %v, want %v", shapes, got, want)
		}
		n := got.NumElements()
		idx := make([]int, len(got))
		for _, s := range shapes {
			st := BroadcastStrides(s, got)
			if len(st) != len(got) {
				t.Fatalf("BroadcastStrides(%v, %v) has %d entries", s, got, len(st))
			}
			for range n {
				off, ref := 0, 0
				for ax, i := range idx {
					off += i * st[ax]
				}
				for j, d := range s { // row-major offset, broadcast axes pinned
					i := idx[len(got)-len(s)+j]
					if d == 1 {
						i = 0
					}
					ref = ref*d + i
				}
				if off != ref {
					t.Fatalf("BroadcastStrides(%v, %v) = %v: index %v reads %d, want %d", s, got, st, idx, off, ref)
				}
				for ax := len(idx) - 1; ax >= 0; ax-- { // next index
					if idx[ax]++; idx[ax] < got[ax] {
						break
					}
					idx[ax] = 0
				}
			}
		}
	})
}
