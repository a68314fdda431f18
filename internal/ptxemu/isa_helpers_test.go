package ptxemu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// Hand-written PTX for the instruction tests: a kernel
// k(.param .u64 out, .param .u64 in) whose prologue puts the pointers in
// %out and %in and each thread's grid index in %gi.

func ptxModule(decls, body string) string {
	return ptx.Header() + `
.visible .entry k(.param .u64 out, .param .u64 in)
{
	.reg .b64 %out, %in, %gi64, %pin, %pout;
	.reg .b32 %gi, %tx, %cx, %nx, %tmp;
` + decls + `
	ld.param.u64 %out, [out];
	ld.param.u64 %in, [in];
	mov.u32 %tx, %tid.x;
	mov.u32 %cx, %ctaid.x;
	mov.u32 %nx, %ntid.x;
	mad.lo.u32 %gi, %cx, %nx, %tx;
	cvt.u64.u32 %gi64, %gi;
` + body + `
	ret;
}
`
}

// runPTX launches kernel k of src over in (each value one 8-byte slot)
// and returns nOut 8-byte output slots.
func runPTX(t testing.TB, src string, l ptx.Launch, o Options, in []uint64, nOut int) ([]uint64, error) {
	t.Helper()
	if len(in) == 0 {
		in = []uint64{0}
	}
	out, err := runPTXBytes(t, src, l, o, tensor.Bytes(in), 8*max(nOut, 1))
	if err != nil {
		return nil, err
	}
	return tensor.Elems[uint64](out)[:nOut], nil
}

// runPTXBytes launches kernel k of src over the bytes in and returns
// nOut output bytes (8-byte aligned buffers).
func runPTXBytes(t testing.TB, src string, l ptx.Launch, o Options, in []byte, nOut int) ([]byte, error) {
	t.Helper()
	m, err := Load(src)
	if err != nil {
		return nil, err
	}
	mem := NewMemory()
	inBuf := make([]uint64, (len(in)+7)/8)
	copy(tensor.Bytes(inBuf), in)
	outBuf := make([]uint64, (nOut+7)/8)
	pi, _ := mem.Map(tensor.Bytes(inBuf)[:len(in)])
	po, _ := mem.Map(tensor.Bytes(outBuf)[:nOut])
	if err := m.LaunchWith(o, mem, "k", l, po, pi); err != nil {
		return nil, err
	}
	return tensor.Bytes(outBuf)[:nOut], nil
}

func launch1D(threads int) ptx.Launch {
	b := min(threads, 256)
	return ptx.Launch{Grid: [3]int{(threads + b - 1) / b, 1, 1}, Block: [3]int{b, 1, 1}}
}

// bitType is the .bN type of a register type's width.
func bitType(ty string) string {
	switch ty {
	case "u8", "s8", "b8":
		return "b8"
	case "u16", "s16", "b16", "f16", "bf16":
		return "b16"
	case "u32", "s32", "b32", "f32":
		return "b32"
	}
	return "b64"
}

// opN runs `opcode %d, %s0, %s1, ...` in len(rows) threads: row i holds
// thread i's source bits; the result bits come back per thread. dt and
// st are register types ("f32", "b16", "pred", ...).
func opN(t testing.TB, opcode, dt string, st []string, rows [][]uint64) []uint64 {
	t.Helper()
	out, err := opNErr(t, opcode, dt, st, rows, Options{})
	if err != nil {
		t.Fatalf("%s: %v", opcode, err)
	}
	return out
}

func opNErr(t testing.TB, opcode, dt string, st []string, rows [][]uint64, o Options) ([]uint64, error) {
	t.Helper()
	var decls, body strings.Builder
	fmt.Fprintf(&decls, "\t.reg .%s %%d;\n\t.reg .pred %%past;\n", dt)
	fmt.Fprintf(&body, "\tsetp.ge.u32 %%past, %%gi, %d;\n\t@%%past bra $done;\n", len(rows))
	fmt.Fprintf(&body, "\tmul.wide.u32 %%pin, %%gi, %d;\n\tadd.u64 %%pin, %%pin, %%in;\n", 8*len(st))
	body.WriteString("\tmul.wide.u32 %pout, %gi, 8;\n\tadd.u64 %pout, %pout, %out;\n")
	var names []string
	for i, s := range st {
		fmt.Fprintf(&decls, "\t.reg .%s %%s%d;\n", s, i)
		names = append(names, fmt.Sprintf("%%s%d", i))
		if s == "pred" {
			fmt.Fprintf(&body, "\tld.global.u32 %%tmp, [%%pin+%d];\n\tsetp.ne.u32 %%s%d, %%tmp, 0;\n", 8*i, i)
			continue
		}
		fmt.Fprintf(&body, "\tld.global.%s %%s%d, [%%pin+%d];\n", bitType(s), i, 8*i)
	}
	fmt.Fprintf(&body, "\t%s %%d, %s;\n", opcode, strings.Join(names, ", "))
	if dt == "pred" {
		body.WriteString("\tselp.u32 %tmp, 1, 0, %d;\n\tst.global.u32 [%pout], %tmp;\n")
	} else {
		fmt.Fprintf(&body, "\tst.global.%s [%%pout], %%d;\n", bitType(dt))
	}
	body.WriteString("$done:\n")
	var in []uint64
	for _, r := range rows {
		if len(r) != len(st) {
			t.Fatalf("%s: row %v for %d sources", opcode, r, len(st))
		}
		in = append(in, r...)
	}
	return runPTX(t, ptxModule(decls.String(), body.String()), launch1D(len(rows)), o, in, len(rows))
}

// op1 runs one instruction in one thread.
func op1(t testing.TB, opcode, dt string, st []string, src ...uint64) uint64 {
	t.Helper()
	return opN(t, opcode, dt, st, [][]uint64{src})[0]
}

func rep(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
