package asm

import (
	"fmt"
	"testing"
)

// Elementwise throughput, single-threaded, for every variant, at 1 Ki
// (L1), 64 Ki (L2) and 16 Mi (memory) elements, next to copy() of the
// same bytes. b.SetBytes counts every byte read and written, so the GB/s
// of a kernel and of BenchmarkEwCopy compare directly (bench/elementwise.sh
// prints the ratios).

var ewBenchSizes = []struct {
	name string
	n    int
}{{"1Ki", 1 << 10}, {"64Ki", 1 << 16}, {"16Mi", 1 << 24}}

func ewBenchInput(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%2000)/100 - 10 // [-10, 10): every branch of every function
	}
	return x
}

// BenchmarkEwCopy copies n float32s (4n bytes read, 4n written).
func BenchmarkEwCopy(b *testing.B) {
	for _, sz := range ewBenchSizes {
		src, dst := ewBenchInput(sz.n), ewBenchInput(sz.n) // both touched: no page faults timed
		b.Run(sz.name, func(b *testing.B) {
			b.SetBytes(int64(8 * sz.n))
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

func BenchmarkEwUnary(b *testing.B) {
	for _, v := range EwVariants() {
		for op := range EwUnary(ewNumUnary) {
			for _, sz := range ewBenchSizes {
				if v == ewGo && sz.n > 1<<16 {
					continue // the twins are a fallback; 64 Ki shows their speed
				}
				x, dst := ewBenchInput(sz.n), ewBenchInput(sz.n)
				b.Run(fmt.Sprintf("%v/%s/%s", op, v.Name, sz.name), func(b *testing.B) {
					b.SetBytes(int64(8 * sz.n))
					for b.Loop() {
						_ = v.Unary(op, dst, x)
					}
				})
			}
		}
	}
}

func BenchmarkEwBinary(b *testing.B) {
	for _, v := range EwVariants() {
		for op := range EwBinary(ewNumBinary) {
			for _, sz := range ewBenchSizes {
				if v == ewGo && sz.n > 1<<16 {
					continue
				}
				x, y, dst := ewBenchInput(sz.n), ewBenchInput(sz.n), ewBenchInput(sz.n)
				for i := range y {
					y[i] += 11 // no division by zero
				}
				b.Run(fmt.Sprintf("%v/%s/%s", op, v.Name, sz.name), func(b *testing.B) {
					b.SetBytes(int64(12 * sz.n))
					for b.Loop() {
						_ = v.Binary(op, dst, x, y)
					}
				})
				b.Run(fmt.Sprintf("%v_scalar/%s/%s", op, v.Name, sz.name), func(b *testing.B) {
					b.SetBytes(int64(8 * sz.n))
					for b.Loop() {
						_ = v.BinaryScalar(op, dst, x, 3)
					}
				})
			}
		}
	}
}
