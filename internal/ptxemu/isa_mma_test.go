package ptxemu

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// ldmatrix and mma.sync against the fragment layouts of the PTX ISA's
// figures, written out by hand in the kernels below (groupID g = lane/4,
// threadID_in_group q = lane%4).

// ldmatrixKernel fills four 8×8 b16 matrices in shared memory with
// M[i][r][c] = 64i + 8r + c (lane t writes row t: matrix t/8, row t%8),
// then every lane gives the address of row lane (matrix lane/8, row
// lane%8) to ldmatrix and stores what it gets.
func ldmatrixKernel(num int, trans string) string {
	regs := []string{"%d0", "%d1", "%d2", "%d3"}[:num]
	var st strings.Builder
	for i, r := range regs {
		fmt.Fprintf(&st, "\tst.global.u32 [%%o+%d], %s;\n", 4*i, r)
	}
	return ptxModule(`
	.shared .align 16 .b16 M[256];
	.reg .b32 %a, %v, %d0, %d1, %d2, %d3;
	.reg .b16 %h;
	.reg .b64 %o;`, fmt.Sprintf(`
	mov.u32 %%a, M;
	mad.lo.u32 %%a, %%gi, 16, %%a;
	mul.lo.u32 %%v, %%gi, 8;
	cvt.u16.u32 %%h, %%v;
	st.shared.u16 [%%a], %%h;
	add.u16 %%h, %%h, 1;
	st.shared.u16 [%%a+2], %%h;
	add.u16 %%h, %%h, 1;
	st.shared.u16 [%%a+4], %%h;
	add.u16 %%h, %%h, 1;
	st.shared.u16 [%%a+6], %%h;
	add.u16 %%h, %%h, 1;
	st.shared.u16 [%%a+8], %%h;
	add.u16 %%h, %%h, 1;
	st.shared.u16 [%%a+10], %%h;
	add.u16 %%h, %%h, 1;
	st.shared.u16 [%%a+12], %%h;
	add.u16 %%h, %%h, 1;
	st.shared.u16 [%%a+14], %%h;
	bar.sync 0;
	ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [%%a];
	mul.wide.u32 %%o, %%gi, 16;
	add.u64 %%o, %%o, %%out;
%s`, num, trans, strings.Join(regs, ", "), st.String()))
}

func TestLdmatrix(t *testing.T) {
	// Hand-checked: lane 5 of matrix 0 holds row 1, columns 2 and 3 (10,
	// 11); transposed, rows 2 and 3 of column 1 (17, 25).
	for _, c := range []struct {
		num   int
		trans bool
	}{{1, false}, {2, false}, {4, false}, {4, true}, {2, true}} {
		tr := ""
		if c.trans {
			tr = ".trans"
		}
		out, err := runPTX(t, ldmatrixKernel(c.num, tr), launch1D(32), Options{}, nil, 64)
		if err != nil {
			t.Fatal(err)
		}
		regs := tensor.Elems[uint32](tensor.Bytes(out))
		for lane := range 32 {
			g, q := lane/4, lane%4
			for i := range c.num {
				lo, hi := 64*i+8*g+2*q, 64*i+8*g+2*q+1 // row g, columns 2q, 2q+1
				if c.trans {
					lo, hi = 64*i+8*(2*q)+g, 64*i+8*(2*q+1)+g // rows 2q, 2q+1 of column g
				}
				want := uint32(lo) | uint32(hi)<<16
				if got := regs[4*lane+i]; got != want {
					t.Errorf("ldmatrix .x%d%s: lane %d matrix %d = %#x, want %#x", c.num, tr, lane, i, got, want)
				}
			}
		}
		if !c.trans && regs[4*5] != 10|11<<16 {
			t.Errorf("lane 5 matrix 0 = %#x, want row 1 columns 2, 3 (10, 11)", regs[4*5])
		}
		if c.trans && regs[4*5] != 17|25<<16 {
			t.Errorf("lane 5 matrix 0 transposed = %#x, want column 1 rows 2, 3 (17, 25)", regs[4*5])
		}
	}
}

// mmaCase describes an mma.sync test: shape (k 8 or 16), input type,
// accumulator type, and whether the kernel loads A's fragment with the
// classic mistake of swapping a1 and a2 (rows and the k halves mixed up).
type mmaCase struct {
	k      int
	in     string // f16 or bf16
	accF16 bool
	swapA  bool
}

// mmaKernel loads A (16×K, row-major), Bᵀ (8×K, row-major, i.e. B in
// column-major) and C (16×8) from the input buffer by the ISA's fragment
// tables, runs one mma.sync and stores D (16×8 row-major):
//
//	A: a0,a1 = A[g][2q..2q+1]   a2,a3 = A[g+8][2q..]   a4,a5 = A[g][2q+8..]   a6,a7 = A[g+8][2q+8..]
//	B: b0,b1 = B[2q..2q+1][g]   b2,b3 = B[2q+8..][g]
//	C, D: c0,c1 = C[g][2q..2q+1]   c2,c3 = C[g+8][2q..]
func mmaKernel(c mmaCase) string {
	k := c.k
	aOff, bOff, cOff := 0, 2*16*k, 2*16*k+2*8*k
	na, nb := k/4, k/8
	rowA := 2 * k // bytes per row of A and of Bᵀ
	aLoads := []string{"[%pa]", fmt.Sprintf("[%%pa+%d]", 8*rowA), "[%pa+16]", fmt.Sprintf("[%%pa+%d]", 8*rowA+16)}[:na]
	if c.swapA {
		aLoads[1], aLoads[2] = aLoads[2], aLoads[1]
	}
	var b strings.Builder
	fmt.Fprintf(&b, `
	mov.u32 %%lane, %%laneid;
	shr.u32 %%g, %%lane, 2;
	and.b32 %%q, %%lane, 3;
	shl.b32 %%q2, %%q, 1;
	mad.lo.u32 %%t, %%g, %d, %%q2;
	mul.wide.u32 %%o, %%t, 2;
	add.u64 %%pa, %%in, %%o;
	add.u64 %%pa, %%pa, %d;
	add.u64 %%pb, %%in, %%o;
	add.u64 %%pb, %%pb, %d;
`, k, aOff, bOff)
	for i, l := range aLoads {
		fmt.Fprintf(&b, "\tld.global.b32 %%a%d, %s;\n", i, l)
	}
	for i := range nb {
		fmt.Fprintf(&b, "\tld.global.b32 %%b%d, [%%pb+%d];\n", i, 16*i)
	}
	cType, cSize := "f32", 4
	if c.accF16 {
		cType, cSize = "f16", 2
	}
	// C and D at (g, 2q): element offset g·8 + 2q.
	fmt.Fprintf(&b, `
	mad.lo.u32 %%t, %%g, 8, %%q2;
	mul.wide.u32 %%o, %%t, %d;
	add.u64 %%pc, %%in, %%o;
	add.u64 %%pc, %%pc, %d;
	add.u64 %%pd, %%out, %%o;
`, cSize, cOff)
	var cRegs, dRegs []string
	if c.accF16 {
		b.WriteString("\tld.global.b32 %c0, [%pc];\n\tld.global.b32 %c1, [%pc+128];\n")
		cRegs, dRegs = []string{"%c0", "%c1"}, []string{"%d0", "%d1"}
	} else {
		b.WriteString("\tld.global.v2.f32 {%c0, %c1}, [%pc];\n\tld.global.v2.f32 {%c2, %c3}, [%pc+256];\n")
		cRegs, dRegs = []string{"%c0", "%c1", "%c2", "%c3"}, []string{"%d0", "%d1", "%d2", "%d3"}
	}
	aRegs := []string{"%a0", "%a1", "%a2", "%a3"}[:na]
	bRegs := []string{"%b0", "%b1"}[:nb]
	fmt.Fprintf(&b, "\tmma.sync.aligned.m16n8k%d.row.col.%s.%s.%s.%s {%s}, {%s}, {%s}, {%s};\n", k, cType, c.in, c.in, cType,
		strings.Join(dRegs, ", "), strings.Join(aRegs, ", "), strings.Join(bRegs, ", "), strings.Join(cRegs, ", "))
	if c.accF16 {
		b.WriteString("\tst.global.b32 [%pd], %d0;\n\tst.global.b32 [%pd+128], %d1;\n")
	} else {
		b.WriteString("\tst.global.v2.f32 [%pd], {%d0, %d1};\n\tst.global.v2.f32 [%pd+256], {%d2, %d3};\n")
	}
	return ptxModule(`
	.reg .b32 %lane, %g, %q, %q2, %t, %a0, %a1, %a2, %a3, %b0, %b1;
	.reg .f32 %c0, %c1, %c2, %c3, %d0, %d1, %d2, %d3;
	.reg .b64 %o, %pa, %pb, %pc, %pd;`, b.String())
}

// runMma fills A, B and C with small multiples of 1/4 (every product and
// sum exact in f32) and returns the kernel's D and the exact A·B + C.
func runMma(t *testing.T, c mmaCase) (got, want [16][8]float64, err error) {
	k := c.k
	A := func(i, j int) float64 { return float64((i*5+j*3)%9-4) / 4 }
	B := func(i, j int) float64 { return float64((i*7+j*2)%7-3) / 2 }
	C := func(i, j int) float64 { return float64((i+3*j)%5 - 2) }
	enc := func(x float64) uint16 {
		if c.in == "bf16" {
			return tensor.F32ToBF16(float32(x))
		}
		return tensor.F32ToF16(float32(x))
	}
	var in []byte
	for i := range 16 {
		for j := range k {
			in = binary.LittleEndian.AppendUint16(in, enc(A(i, j)))
		}
	}
	for n := range 8 { // Bᵀ row n is column n of B
		for j := range k {
			in = binary.LittleEndian.AppendUint16(in, enc(B(j, n)))
		}
	}
	for i := range 16 {
		for j := range 8 {
			if c.accF16 {
				in = binary.LittleEndian.AppendUint16(in, tensor.F32ToF16(float32(C(i, j))))
			} else {
				in = binary.LittleEndian.AppendUint32(in, math.Float32bits(float32(C(i, j))))
			}
		}
	}
	size := 4
	if c.accF16 {
		size = 2
	}
	out, err := runPTXBytes(t, mmaKernel(c), launch1D(32), Options{}, in, 16*8*size)
	if err != nil {
		return got, want, err
	}
	for i := range 16 {
		for j := range 8 {
			s := C(i, j)
			for kk := range k {
				s += A(i, kk) * B(kk, j)
			}
			want[i][j] = s
			if c.accF16 {
				got[i][j] = float64(tensor.F16ToF32(binary.LittleEndian.Uint16(out[2*(8*i+j):])))
			} else {
				got[i][j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4*(8*i+j):])))
			}
		}
	}
	return got, want, nil
}

func TestMma(t *testing.T) {
	for _, c := range []mmaCase{{16, "f16", false, false}, {16, "bf16", false, false}, {8, "f16", false, false},
		{8, "bf16", false, false}, {16, "f16", true, false}, {8, "f16", true, false}} {
		got, want, err := runMma(t, c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got != want {
			t.Errorf("mma %+v:\n got %v\nwant %v", c, got, want)
		}
	}
}

// TestMmaWrongFragment: a kernel that loads A's fragment in the wrong
// order (a1 and a2 swapped) runs, and the comparison catches it.
func TestMmaWrongFragment(t *testing.T) {
	got, want, err := runMma(t, mmaCase{16, "f16", false, true})
	if err != nil {
		t.Fatal(err)
	}
	if got == want {
		t.Fatal("a swapped A fragment produced the right product")
	}
}

// TestWarpCollectiveNeedsFullWarp: .aligned collectives need every lane;
// one that exited instead is an error naming it.
func TestWarpCollectiveNeedsFullWarp(t *testing.T) {
	src := mmaKernel(mmaCase{16, "f16", false, false})
	src = strings.Replace(src, "\tmma.sync", "\tsetp.eq.u32 %p0, %lane, 7;\n\t@%p0 ret;\n\tmma.sync", 1)
	src = strings.Replace(src, ".reg .b64 %o,", ".reg .pred %p0;\n\t.reg .b64 %o,", 1)
	_, err := runPTXBytes(t, src, launch1D(32), Options{}, make([]byte, 2*16*16+2*8*16+4*128), 512)
	if err == nil || !strings.Contains(err.Error(), "mma.sync") || !strings.Contains(err.Error(), "lane 7 exited") {
		t.Errorf("lane 7 skipping mma.sync: %v", err)
	}
}
