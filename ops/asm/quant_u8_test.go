package asm

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestQuantizeU8 runs every row variant's QuantizeU8 against the Go twin
// (which ops' TestQuantizeRow checks against the float64 formula) over
// halves and their float32 neighbours, random and special quotients
// (±Inf, NaN, ±0, huge), five zero points, two scales, every length to
// 40 and a long row, and checks that no byte past the row is written.
func TestQuantizeU8(t *testing.T) {
	var xs []float32
	for h := -1200; h <= 1200; h++ {
		v := float32(h) / 2
		xs = append(xs, v, math.Nextafter32(v, float32(math.Inf(1))), math.Nextafter32(v, float32(math.Inf(-1))))
	}
	r := rand.New(rand.NewPCG(24, 6))
	for range 5000 {
		xs = append(xs, float32(r.NormFloat64()*300), math.Float32frombits(r.Uint32()))
	}
	xs = append(xs, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)), 1e30, -1e30)
	for _, k := range RowVariants() {
		for _, z := range []uint8{0, 1, 128, 254, 255} {
			for _, s := range []float32{1, 0.0317} {
				want := make([]uint8, len(xs))
				quantizeU8Go(want, xs, s, z)
				check := func(x []float32, off int) {
					got := make([]uint8, len(x)+8)
					for i := range got {
						got[i] = 0xA5
					}
					if err := QuantizeU8(k, got[:len(x)], x, s, z); err != nil {
						t.Fatal(err)
					}
					for i := range x {
						if got[i] != want[off+i] {
							t.Fatalf("%s z %d s %v n %d: q[%d] of %v = %d, want %d", k.Name, z, s, len(x), i, x[i], got[i], want[off+i])
						}
					}
					for i := len(x); i < len(got); i++ {
						if got[i] != 0xA5 {
							t.Fatalf("%s n %d: byte %d past the row written", k.Name, len(x), i)
						}
					}
				}
				check(xs, 0)
				for n := 0; n <= 40; n++ {
					check(xs[n*7:n*7+n], n*7)
				}
			}
		}
	}
	if QuantizeU8(nil, make([]uint8, 3), make([]float32, 4), 1, 0) == nil {
		t.Error("a short q accepted")
	}
}

// TestDequantRow runs every row variant's DequantRow against the Go twin
// bit for bit: sums, column terms and zero points over the whole int32
// range (the int32 arithmetic wraps), a row term at its extremes, sums
// past 2²⁴ (where the conversion rounds), with and without a bias, every
// length to 40 and a long row, in place over the sums and not, and checks
// that nothing past the row is written.
func TestDequantRow(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 8))
	const n = 300
	acc, ct, cz := make([]int32, n), make([]int32, n), make([]int32, n)
	sc, bias := make([]float32, n), make([]float32, n)
	for i := range n {
		acc[i], ct[i], cz[i] = int32(r.Uint32()), int32(r.Uint32()), int32(r.IntN(256)-128)
		if i%3 == 0 {
			acc[i], ct[i] = int32(r.IntN(1<<25)-1<<24), int32(r.IntN(1000))
		}
		sc[i], bias[i] = float32(r.NormFloat64()*1e-3), float32(r.NormFloat64())
	}
	for _, k := range RowVariants() {
		for _, ra := range []int32{0, 1, -7, math.MaxInt32, math.MinInt32, int32(r.Uint32())} {
			for _, b := range [][]float32{nil, bias} {
				for _, inPlace := range []bool{false, true} {
					check := func(m int) {
						want := make([]float32, m)
						dequantRowGo(want, acc, ct, cz, ra, sc, b)
						src := append([]int32(nil), acc[:m]...)
						src = append(src, 0x5a5a5a5a, 0x5a5a5a5a)
						y := make([]float32, m+2)
						if inPlace {
							y = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(src))), m+2)
						} else {
							y[m], y[m+1] = math.Float32frombits(0x5a5a5a5a), math.Float32frombits(0x5a5a5a5a)
						}
						if err := DequantRow(k, y[:m], src, ct, cz, ra, sc, b); err != nil {
							t.Fatal(err)
						}
						for j := range m {
							if math.Float32bits(y[j]) != math.Float32bits(want[j]) {
								t.Fatalf("%s ra %d bias %v in place %v n %d: y[%d] = %v, want %v", k.Name, ra, b != nil, inPlace, m, j, y[j], want[j])
							}
						}
						if math.Float32bits(y[m]) != 0x5a5a5a5a || math.Float32bits(y[m+1]) != 0x5a5a5a5a {
							t.Fatalf("%s n %d: past the row written", k.Name, m)
						}
					}
					for m := 0; m <= 40; m++ {
						check(m)
					}
					check(n)
				}
			}
		}
	}
	if DequantRow(nil, make([]float32, 4), make([]int32, 3), ct, cz, 0, sc, nil) == nil {
		t.Error("a short acc accepted")
	}
}
