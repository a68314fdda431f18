package asm

// Patch panels that span output rows. A panel of sixteen positions whose
// output rows are shorter than sixteen (or which starts near a row's
// end) reads each tap as a few segments, one per output row it touches.
// The assembly packers take the segments as masks once per panel and
// gather every tap with one masked load per segment (stride 1) or two
// and a permute (stride 2), where Go copied each segment of each tap in
// a call of its own: on ResNet-18's 14×14 and 7×7 stages that copying was
// a fifth to a third of the convolution's time.

// convSeg is one segment of a panel for the assembly packers: lanes
// [at, at+n) (the bits of out) read one output row's consecutive
// positions. Lane t reads the tap's cell delta + t·stride; at stride 2
// the segment's 32-float window starts at delta, and lo and hi are the
// floats of its two halves that it reads.
type convSeg struct {
	delta       int
	out, lo, hi uint16
	_           uint16
}

// convSegs are a panel's segments: at most one per lane.
type convSegs [16]convSeg

// convRowsKernel packs n panel rows of sixteen positions given as the
// first nseg segments (1 <= nseg <= 16, n >= 1) at a fixed stride:
//
//	for s < n: dst[16s+t] = src[off[s] + segs[i].delta + t·stride] for the lanes t of segment i, 0 elsewhere
//
// The caller checks that every cell read is inside src and that dst
// holds 16n floats. The segments come by value: a pointer to them,
// passed through a func value, would move them to the heap on every
// call.
type convRowsKernel func(dst, src *float32, off *int, n, nseg int, segs convSegs)

// makeConvSeg is the segment of lanes [at, at+n) whose first lane reads
// the tap's cell src, at the given stride (1 or 2).
func makeConvSeg(at, n, src, stride int) convSeg {
	s := convSeg{delta: src - at*stride, out: uint16((1<<n - 1) << at)}
	if stride == 2 {
		var window uint32 // the window's floats read, two per lane
		for t := at; t < at+n; t++ {
			window |= 1 << (2 * t)
		}
		s.lo, s.hi = uint16(window), uint16(window>>16)
	}
	return s
}
