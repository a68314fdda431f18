package asm

// Chunks runs a prepared loop over items split into at most Par.Threads
// contiguous chunks. Each chunk has an index below N, so it can use its
// own scratch; the For body is bound once, so Do does not allocate; and
// For is only ever asked for as many iterations as it has workers, each
// of which is one chunk.
type Chunks struct {
	par   Par
	items int
	n     int                     // number of chunks
	work  func(chunk, lo, hi int) // processes items [lo, hi) with chunk's scratch
	body  func(lo, hi int)
}

// NewChunks splits items so that each chunk has at least minItems of them
// where there are enough (one chunk at least, none for no items). work is
// called with a chunk index and the chunk's item range.
func NewChunks(par Par, items, minItems int, work func(chunk, lo, hi int)) *Chunks {
	if par.For == nil || par.Threads < 1 {
		par = Par{For: serialFor, Threads: 1}
	}
	n := min(par.Threads, max(1, items/max(minItems, 1)))
	if items <= 0 {
		n = 0
	}
	c := &Chunks{par: par, items: items, n: n, work: work}
	c.body = c.run
	return c
}

// N is the number of chunks (the scratch slots work may index).
func (c *Chunks) N() int { return c.n }

func (c *Chunks) run(lo, hi int) {
	for ch := lo; ch < hi; ch++ {
		c.work(ch, ch*c.items/c.n, (ch+1)*c.items/c.n)
	}
}

// Do runs every chunk and returns when all are done.
func (c *Chunks) Do() {
	switch c.n {
	case 0:
	case 1:
		c.work(0, 0, c.items)
	default:
		c.par.For(c.n, 1, c.body)
	}
}
