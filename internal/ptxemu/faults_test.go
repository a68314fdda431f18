package ptxemu

import (
	"errors"
	"strings"
	"testing"

	"github.com/kilnml/kiln/ptx"
)

// Faults name the kernel, line, instruction, block and thread, and what
// went wrong; unsupported PTX fails at Load, naming the line.

func TestRuntimeFaults(t *testing.T) {
	cases := []struct {
		name, decls, body string
		threads           int
		opts              Options
		want              []string
	}{
		{"out of bounds", `.reg .b32 %v; .reg .b64 %o;`, `
	mul.wide.u32 %o, %gi, 4;
	add.u64 %o, %o, %in;
	ld.global.u32 %v, [%o+4];`, 4, Options{},
			[]string{"out-of-bounds global read", "thread (1,0,0)", "4 bytes at 0x", "past the end of the allocation"}},
		{"misaligned", `.reg .b32 %v;`, `ld.global.u32 %v, [%in+2];`, 1, Options{},
			[]string{"misaligned global read of 4 bytes", "needs 4-byte alignment"}},
		{"uninitialised", `.reg .b32 %v, %w;`, `add.u32 %v, %w, 1;`, 1, Options{},
			[]string{"reads register %w, which was never written", "line "}},
		{"shared out of bounds", `.shared .align 4 .b32 S[4]; .reg .b32 %a;`, `
	mov.u32 %a, S;
	st.shared.u32 [%a+16], %gi;`, 1, Options{}, []string{"out-of-bounds shared write", "16 bytes of shared memory"}},
		{"infinite loop", ``, `
$spin:
	bra.uni $spin;`, 1, Options{MaxSteps: 1000}, []string{"Options.MaxSteps"}},
		{"null pointer", `.reg .b32 %v; .reg .b64 %z;`, `
	mov.u64 %z, 0;
	ld.global.u32 %v, [%z];`, 1, Options{}, []string{"out-of-bounds global read", "at 0x0"}},
	}
	for _, c := range cases {
		_, err := runPTX(t, ptxModule(c.decls, c.body), launch1D(c.threads), c.opts, []uint64{1}, 1)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v is not an *Error", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		if e.Kernel != "k" || e.Line == 0 || e.Instr == "" {
			t.Errorf("%s: incomplete location %+v", c.name, e)
		}
	}
	// Reading an uninitialised register is allowed on request (it reads 0).
	if _, err := runPTX(t, ptxModule(`.reg .b32 %v, %w;`, `add.u32 %v, %w, 1;`), launch1D(1), Options{AllowUninit: true}, nil, 1); err != nil {
		t.Errorf("AllowUninit: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct{ name, decls, body, want string }{
		{"unsupported instruction", `.reg .pred %p;`, "\tvote.sync.any.pred %p, %p, -1;", "unsupported instruction \"vote\""},
		{"unsupported modifier", `.reg .b32 %v;`, "\tadd.cc.u32 %v, %gi, 1;", "unsupported modifier .cc"},
		{"unknown register", ``, "\tadd.u32 %nope, %gi, 1;", "unknown register \"%nope\""},
		{"unknown label", ``, "\tbra.uni $nowhere;", "unknown label"},
		{"narrow register", `.reg .b16 %h;`, "\tadd.u32 %h, %gi, 1;", "register %h has 16 bits"},
		{"float immediate type", `.reg .f32 %f;`, "\tadd.f32 %f, %f, 1;", "integer literal for an .f32 operand"},
		{"calls", ``, "\tcall foo;", "unsupported instruction \"call\""},
		{"const space", `.reg .b32 %v;`, "\tld.const.u32 %v, [%in];", "the .const space is not supported"},
		{"texture", `.reg .b32 %v;`, "\ttex.1d.v4.s32.s32 {%v, %v, %v, %v}, [%in, {%v}];", "unsupported instruction \"tex\""},
	}
	for _, c := range cases {
		src := ptxModule(c.decls, c.body)
		_, err := Load(src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
			continue
		}
		// The error names the line of the offending instruction.
		line := 1 + strings.Count(src[:strings.Index(src, strings.TrimSpace(c.body))], "\n")
		if !strings.Contains(err.Error(), "line "+itoaLine(line)) {
			t.Errorf("%s: %v does not name line %d", c.name, err, line)
		}
	}
	if _, err := Load(ptx.Header() + "\n.global .u32 g;\n"); err == nil || !strings.Contains(err.Error(), "module-scope .global") {
		t.Errorf("module-scope variable: %v", err)
	}
}

func itoaLine(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestLaunchErrors(t *testing.T) {
	m, err := Load(ptxModule(``, ``))
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemory()
	p, _ := mem.Alloc(8)
	if err := m.Launch(mem, "k", launch1D(1), p); err == nil || !strings.Contains(err.Error(), "takes 2 arguments") {
		t.Errorf("argument count: %v", err)
	}
	if err := m.Launch(mem, "nope", launch1D(1), p, p); err == nil || !strings.Contains(err.Error(), "no entry") {
		t.Errorf("unknown kernel: %v", err)
	}
	bad := ptx.Launch{Grid: [3]int{1, 1, 1}, Block: [3]int{2048, 1, 1}}
	if err := m.Launch(mem, "k", bad, p, p); err == nil {
		t.Error("a 2048-thread block launched")
	}
	if err := m.LaunchWith(Options{Blocks: []int{5}}, mem, "k", launch1D(1), p, p); err == nil || !strings.Contains(err.Error(), "Options.Blocks") {
		t.Errorf("block outside the grid: %v", err)
	}
	if err := m.Launch(mem, "k", launch1D(1), p, p); err != nil {
		t.Errorf("a valid launch: %v", err)
	}
}

// TestFirstBlockError: with every block faulting, the error is the
// lowest-numbered block's, whatever the workers' timing.
func TestFirstBlockError(t *testing.T) {
	src := ptxModule(`.reg .b32 %v; .reg .b64 %z;`, `
	mov.u64 %z, 8;
	ld.global.u32 %v, [%z];`)
	l := ptx.Launch{Grid: [3]int{4, 3, 1}, Block: [3]int{2, 1, 1}}
	for _, w := range []int{1, 4} {
		_, err := runPTX(t, src, l, Options{Workers: w}, nil, 1)
		var e *Error
		if !errors.As(err, &e) || e.Block != [3]int{0, 0, 0} || e.Thread != [3]int{0, 0, 0} {
			t.Errorf("workers %d: %v", w, err)
		}
	}
}

// TestMemory: allocations are separated by unmapped gaps, sparse ones
// read zero until written, and host accesses check bounds.
func TestMemory(t *testing.T) {
	m := NewMemory()
	a, _ := m.Alloc(10)
	b, _ := m.Alloc(10)
	if b-a < 10+allocGap {
		t.Errorf("allocations %#x and %#x are not separated by a gap", a, b)
	}
	if err := m.Write(a+8, []byte{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "runs past the end") {
		t.Errorf("write past the end: %v", err)
	}
	if err := m.Read(a+20, make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("read in the gap: %v", err)
	}
	s, _ := m.AllocSparse(1 << 40)
	buf := make([]byte, 10000)
	for i := range buf {
		buf[i] = byte(i)
	}
	if err := m.Write(s+(1<<39)-5000, buf); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 10002)
	if err := m.Read(s+(1<<39)-5001, got); err != nil {
		t.Fatal(err)
	}
	if got[0] != 0 || got[10001] != 0 || got[1] != 0 || got[5000] != buf[4999] || got[10000] != buf[9999] {
		t.Errorf("sparse round trip: %v ... %v", got[:3], got[9999:])
	}
	if err := m.Free(a); err != nil {
		t.Error(err)
	}
	if err := m.Read(a, make([]byte, 1)); err == nil {
		t.Error("read of freed memory")
	}
}
