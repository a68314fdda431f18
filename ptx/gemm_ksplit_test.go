package ptx

import "testing"

// TestAutoTile: big grids keep the default tile; small ones take 32×32
// blocks with K split four ways (two, or none, when K is short) and
// 32-deep steps when more than 16 would remain: the shapes measured on
// an H200 (BERT at batch 1: 128×384 over K = 384 and 1536).
func TestAutoTile(t *testing.T) {
	for _, c := range []struct {
		m, n, k, batches int
		want             GemmTile
	}{
		{1024, 1536, 384, 1, DefaultTile},
		{128, 384, 384, 32, DefaultTile}, // 32 batches of 12 blocks
		{128, 384, 384, 1, GemmTile{32, 32, 16, 4, 4, 4}},
		{128, 384, 1536, 1, GemmTile{32, 32, 32, 4, 4, 4}},
		{128, 1536, 384, 1, GemmTile{32, 32, 16, 4, 4, 4}},
		{8, 384, 100, 1, GemmTile{32, 32, 16, 4, 4, 2}},
		{8, 384, 33, 1, GemmTile{32, 32, 16, 4, 4, 0}},
	} {
		got := autoTile(c.m, c.n, c.k, c.batches)
		if got != c.want {
			t.Errorf("autoTile(%d, %d, %d, %d) = %+v, want %+v", c.m, c.n, c.k, c.batches, got, c.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("autoTile(%d, %d, %d, %d): %v", c.m, c.n, c.k, c.batches, err)
		}
	}
}
