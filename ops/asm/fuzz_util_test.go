package asm

import "math"

// fuzzIn hands out the fuzzer's bytes as small integers and float32 bit
// patterns; past the end it yields zeros, so every input decodes.
type fuzzIn struct{ b []byte }

func (f *fuzzIn) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

// intn returns a value in [0, n) from one or two bytes.
func (f *fuzzIn) intn(n int) int {
	if n <= 256 {
		return int(f.byte()) % n
	}
	return (int(f.byte()) | int(f.byte())<<8) % n
}

// float returns a float32 chosen by a class byte so that the specials are
// common: NaN, ±Inf, ±0, subnormals, the extremes of the range, raw bits,
// or a small value. maxAbs bounds the finite values (0: no bound) for
// kernels whose float64 references only agree away from overflow.
func (f *fuzzIn) float(maxAbs float32) float32 {
	c := f.byte()
	sign := float32(1)
	if c&0x80 != 0 {
		sign = -1
	}
	var v float32
	switch c & 0x7f % 12 {
	case 7:
		return float32(math.NaN())
	case 1:
		return sign * float32(math.Inf(1))
	case 2:
		v = 0
	case 3:
		v = math.Float32frombits(1 + uint32(f.byte())<<8 + uint32(f.byte())) // subnormal
	case 4:
		v = math.MaxFloat32 / float32(1+f.byte())
	case 5:
		v = math.SmallestNonzeroFloat32 * float32(1+f.byte()) * 0x1p23 // the smallest normals
	case 6:
		bits := uint32(f.byte()) | uint32(f.byte())<<8 | uint32(f.byte())<<16 | uint32(f.byte())<<24
		v = math.Float32frombits(bits)
		if v != v || math.IsInf(float64(v), 0) {
			return v
		}
		sign = 1
	default:
		v = float32(int8(f.byte())) / float32(1+f.byte()%16)
	}
	v *= sign
	if maxAbs > 0 && (v > maxAbs || v < -maxAbs) {
		v = float32(math.Mod(float64(v), float64(maxAbs)))
	}
	return v
}

// floats fills a slice of n values.
func (f *fuzzIn) floats(n int, maxAbs float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = f.float(maxAbs)
	}
	return x
}
