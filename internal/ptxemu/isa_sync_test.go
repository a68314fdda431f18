package ptxemu

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnml/kiln/ptx"
)

// Barriers, the shared-memory race detector, atomics and the other state
// spaces.

// rotateKernel: thread t clears S[t], waits at a barrier, writes
// S[t] = 2t, synchronises with sync (if any), then reads S[(t+1) % n]
// and stores it.
func rotateKernel(n int, sync string) string {
	return ptxModule(`
	.shared .align 4 .u32 S[128];
	.reg .b32 %a, %v, %j, %b;
	.reg .b64 %o;`, `
	mov.u32 %b, S;
	mad.lo.u32 %a, %gi, 4, %b;
	mov.u32 %v, 0;
	st.shared.u32 [%a], %v;
	bar.sync 0;
	shl.b32 %v, %gi, 1;
	st.shared.u32 [%a], %v;
	`+sync+`
	add.u32 %j, %gi, 1;
	rem.u32 %j, %j, `+strconv.Itoa(n)+`;
	mad.lo.u32 %a, %j, 4, %b;
	ld.shared.u32 %v, [%a];
	mul.wide.u32 %o, %gi, 8;
	add.u64 %o, %o, %out;
	st.global.u32 [%o], %v;`)
}

func TestBarrier(t *testing.T) {
	for _, rev := range []bool{false, true} {
		out, err := runPTX(t, rotateKernel(96, "bar.sync 0;"), launch1D(96), Options{ReverseThreads: rev}, nil, 96)
		if err != nil {
			t.Fatal(err)
		}
		for tid, v := range out {
			if want := uint64(2 * ((tid + 1) % 96)); v != want {
				t.Fatalf("reverse %v: thread %d read %d, want %d", rev, tid, v, want)
			}
		}
	}
}

// TestRaceDetector: without the barrier, thread 0 reads S[1] before
// thread 1 writes it (in either scheduling order one of them is first):
// the error names both threads and the location.
func TestRaceDetector(t *testing.T) {
	for _, rev := range []bool{false, true} {
		_, err := runPTX(t, rotateKernel(96, ""), launch1D(96), Options{ReverseThreads: rev}, nil, 96)
		if err == nil {
			t.Fatalf("reverse %v: no race reported", rev)
		}
		msg := err.Error()
		if !strings.Contains(msg, "data race on S+") || strings.Count(msg, "thread (") < 2 {
			t.Errorf("reverse %v: %v", rev, err)
		}
	}
	if !strings.Contains(mustErr(t, rotateKernel(96, ""), 96, Options{}), "thread (1,0,0) writes it, and thread (0,0,0) read it") {
		t.Error("forward order: thread 0 reads S[1] first, then thread 1 writes it")
	}
	// Turning the detector off leaves a wrong, order-dependent answer.
	out, err := runPTX(t, rotateKernel(96, ""), launch1D(96), Options{NoRaceCheck: true}, nil, 96)
	if err != nil {
		t.Fatal(err)
	}
	if out[0] != 0 {
		t.Error("thread 0 saw thread 1's write without a barrier: the scheduler should run thread 0 first")
	}
	// Reading shared memory nobody wrote is an error too.
	unwritten := ptxModule(`
	.shared .align 4 .u32 S[64];
	.reg .b32 %a, %v;`, `
	mov.u32 %a, S;
	ld.shared.u32 %v, [%a+40];`)
	if msg := mustErr(t, unwritten, 32, Options{}); !strings.Contains(msg, "reads shared memory at S+40, which no thread of the block has written") {
		t.Errorf("unwritten shared memory: %s", msg)
	}
}

func mustErr(t *testing.T, src string, threads int, o Options) string {
	t.Helper()
	_, err := runPTX(t, src, launch1D(threads), o, nil, threads)
	if err == nil {
		t.Fatal("no error")
	}
	return err.Error()
}

// TestWarpSyncOrdering: bar.warp.sync orders shared memory between the
// lanes of a warp; a shuffle does not (the PTX memory model gives
// shfl.sync no ordering), so the detector reports the second kernel.
func TestWarpSyncOrdering(t *testing.T) {
	if _, err := runPTX(t, rotateKernel(32, "bar.warp.sync -1;"), launch1D(32), Options{}, nil, 32); err != nil {
		t.Errorf("bar.warp.sync: %v", err)
	}
	shfl := rotateKernel(32, "shfl.sync.bfly.b32 %j, %v, 1, 31, -1;")
	if msg := mustErr(t, shfl, 32, Options{}); !strings.Contains(msg, "data race") {
		t.Errorf("shfl.sync as a fence: %s", msg)
	}
	// A warp barrier orders nothing between different warps.
	if msg := mustErr(t, rotateKernel(64, "bar.warp.sync -1;"), 64, Options{ReverseThreads: true}); !strings.Contains(msg, "data race") {
		t.Errorf("bar.warp.sync across warps: %s", msg)
	}
}

// TestBarrierErrors: a barrier some threads exited before, a thread
// count that is not a multiple of 32, and a guarded barrier.
func TestBarrierErrors(t *testing.T) {
	exited := ptxModule(`.reg .pred %p;`, `
	setp.ge.u32 %p, %gi, 32;
	@%p ret;
	bar.sync 0;`)
	if msg := mustErr(t, exited, 64, Options{}); !strings.Contains(msg, "can never complete") || !strings.Contains(msg, "thread (32,0,0) exited") {
		t.Errorf("barrier after exit: %s", msg)
	}
	odd := ptxModule(``, `bar.sync 1, 48;`)
	if msg := mustErr(t, odd, 64, Options{}); !strings.Contains(msg, "multiple of 32") {
		t.Errorf("bar.sync 1, 48: %s", msg)
	}
}

// TestCountedBarrier: producer warp 0 writes then bar.arrive 1, 64;
// consumer warp 1 waits with bar.sync 1, 64 and reads.
func TestCountedBarrier(t *testing.T) {
	src := ptxModule(`
	.shared .align 4 .u32 S[32];
	.reg .b32 %a, %v, %lane;
	.reg .pred %prod;
	.reg .b64 %o;`, `
	and.b32 %lane, %gi, 31;
	mov.u32 %a, S;
	mad.lo.u32 %a, %lane, 4, %a;
	setp.lt.u32 %prod, %gi, 32;
	@!%prod bra $consume;
	mad.lo.u32 %v, %lane, 10, 1;
	st.shared.u32 [%a], %v;
	bar.arrive 1, 64;
	bra.uni $end;
$consume:
	bar.sync 1, 64;
	ld.shared.u32 %v, [%a];
	mul.wide.u32 %o, %lane, 8;
	add.u64 %o, %o, %out;
	st.global.u32 [%o], %v;
$end:`)
	out, err := runPTX(t, src, launch1D(64), Options{}, nil, 32)
	if err != nil {
		t.Fatal(err)
	}
	for lane, v := range out {
		if v != uint64(10*lane+1) {
			t.Fatalf("lane %d read %d", lane, v)
		}
	}
}

func TestAtomics(t *testing.T) {
	src := ptxModule(`
	.shared .align 4 .u32 C[4];
	.reg .b32 %a, %v, %old, %z;
	.reg .f32 %f;
	.reg .pred %first;
	.reg .b64 %g;`, `
	mov.u32 %a, C;
	setp.eq.u32 %first, %tx, 0;
	mov.u32 %z, 0;
	@%first st.shared.u32 [%a], %z;
	@%first st.shared.u32 [%a+4], %z;
	bar.sync 0;
	atom.shared.add.u32 %old, [%a], 1;
	atom.shared.inc.u32 %old, [%a+4], 4;
	red.global.add.u32 [%out], 1;
	mov.f32 %f, 0f3F000000;
	red.global.add.f32 [%out+8], %f;
	atom.global.max.s32 %old, [%out+16], %gi;
	atom.global.min.u32 %old, [%out+24], %gi;
	atom.global.exch.b32 %old, [%out+32], 7;
	atom.global.cas.b32 %old, [%out+40], 0, %gi;
	bar.sync 0;
	@!%first bra $end;
	ld.shared.u32 %v, [%a];
	mul.wide.u32 %g, %cx, 4;
	add.u64 %g, %g, %out;
	st.global.u32 [%g+48], %v;
	ld.shared.u32 %v, [%a+4];
	st.global.u32 [%g+56], %v;
$end:`)
	l := launch1D(128)
	l.Grid[0], l.Block[0] = 2, 64
	out, err := runPTX(t, src, l, Options{}, nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	// The min slot starts at 0, so stays 0; cas swaps only the first time
	// (the slot holds 0 until one thread replaces it with its index).
	if out[0] != 128 || math.Float32frombits(uint32(out[1])) != 64 || out[2] != 127 || out[3] != 0 || out[4] != 7 {
		t.Errorf("global atomics: %v", out[:5])
	}
	if out[6] != 64|64<<32 {
		t.Errorf("shared add per block: %#x, want 64 in each half", out[6])
	}
	// inc wraps past 4: 64 increments from 0 cycle through 0..4, ending at 64 mod 5.
	if out[7] != 4|4<<32 {
		t.Errorf("shared inc: %#x, want 4 (64 mod 5) in each half", out[7])
	}
	// A plain store from every thread to one shared word is a race.
	racy := ptxModule(`
	.shared .align 4 .u32 C[1];
	.reg .b32 %a;`, `
	mov.u32 %a, C;
	st.shared.u32 [%a], %gi;`)
	if msg := mustErr(t, racy, 64, Options{}); !strings.Contains(msg, "data race on C+0") {
		t.Errorf("plain stores to one word: %s", msg)
	}
}

// TestStateSpaces: local arrays, generic addresses of shared memory,
// cp.async, vector accesses.
func TestStateSpaces(t *testing.T) {
	src := ptxModule(`
	.shared .align 16 .u32 S[4];
	.local .align 8 .u32 L[2];
	.reg .b32 %a, %v, %w, %x, %y;
	.reg .b64 %ga, %la;`, `
	mov.u32 %a, S;
	cp.async.ca.shared.global [%a], [%in], 16;
	cp.async.commit_group;
	cp.async.wait_all;
	ld.shared.v4.u32 {%v, %w, %x, %y}, [%a];
	st.local.u32 [L], %v;
	st.local.u32 [L+4], %w;
	mov.u64 %la, L;
	cvta.local.u64 %la, %la;
	ld.u32 %v, [%la+4];
	cvt.u64.u32 %ga, %a;
	cvta.shared.u64 %ga, %ga;
	ld.u32 %w, [%ga+8];
	st.global.v2.u32 [%out], {%v, %w};
	ld.local.u32 %v, [L];
	st.global.u32 [%out+8], %v;`)
	out, err := runPTX(t, src, launch1D(1), Options{}, []uint64{0x0000_0002_0000_0001, 0x0000_0004_0000_0003}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if out[0] != 2|3<<32 || out[1] != 1 {
		t.Errorf("got %#x, want [0x300000002 0x1]", out)
	}
}

// TestSpecialRegisters: %tid, %ntid, %ctaid, %nctaid, %laneid, %warpid,
// %lanemask_lt over a 3-D grid of 3-D blocks; the linear thread index is
// x + y·ntid.x + z·ntid.x·ntid.y and warps are 32 consecutive ones.
func TestSpecialRegisters(t *testing.T) {
	src := ptx.Header() + `
.visible .entry k(.param .u64 out, .param .u64 in)
{
	.reg .b32 %r<20>;
	.reg .b64 %o, %v, %w;
	ld.param.u64 %o, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %tid.y;
	mov.u32 %r3, %tid.z;
	mov.u32 %r4, %ctaid.x;
	mov.u32 %r5, %ctaid.y;
	mov.u32 %r6, %ctaid.z;
	mov.u32 %r7, %ntid.x;
	mov.u32 %r8, %ntid.y;
	mov.u32 %r9, %nctaid.x;
	mov.u32 %r10, %nctaid.y;
	mov.u32 %r11, %laneid;
	mov.u32 %r12, %warpid;
	mov.u32 %r13, %lanemask_lt;
	// block = (z·nctaid.y + y)·nctaid.x + x; thread = (z·ntid.y + y)·ntid.x + x
	mad.lo.u32 %r14, %r6, %r10, %r5;
	mad.lo.u32 %r14, %r14, %r9, %r4;
	mad.lo.u32 %r15, %r3, %r8, %r2;
	mad.lo.u32 %r15, %r15, %r7, %r1;
	mov.u32 %r16, %ntid.z;
	mul.lo.u32 %r16, %r16, %r8;
	mul.lo.u32 %r16, %r16, %r7;
	mad.lo.u32 %r17, %r14, %r16, %r15;
	mul.wide.u32 %w, %r17, 16;
	add.u64 %w, %w, %o;
	shl.b32 %r18, %r12, 8;
	or.b32 %r18, %r18, %r11;
	st.global.v2.u32 [%w], {%r18, %r13};
	st.global.u32 [%w+8], %r15;
	exit;
}
`
	l := ptx.Launch{Grid: [3]int{2, 3, 2}, Block: [3]int{8, 4, 2}}
	out, err := runPTX(t, src, l, Options{}, nil, 2*l.Blocks()*l.Threads())
	if err != nil {
		t.Fatal(err)
	}
	for b := range l.Blocks() {
		for lin := range l.Threads() {
			rec := out[2*(b*l.Threads()+lin):]
			lane, warp := lin%32, lin/32
			if want := uint64(lane|warp<<8) | uint64(1<<lane-1)<<32; rec[0] != want {
				t.Fatalf("block %d thread %d: lane/warp/lanemask %#x, want %#x", b, lin, rec[0], want)
			}
			if rec[1] != uint64(lin) {
				t.Fatalf("block %d thread %d: linear index %d", b, lin, rec[1])
			}
		}
	}
}

// TestDynamicShared: an extern shared array gets the launch's dynamic
// shared bytes, after the static ones.
func TestDynamicShared(t *testing.T) {
	src := ptxModule(`
	.shared .align 4 .u32 S[3];
	.extern .shared .align 16 .b8 dyn[];
	.reg .b32 %a, %v;`, `
	mov.u32 %a, dyn;
	st.global.u32 [%out], %a;
	mad.lo.u32 %a, %gi, 4, %a;
	st.shared.u32 [%a], %gi;
	bar.sync 0;
	ld.shared.u32 %v, [%a];`)
	l := launch1D(16)
	l.Shared = 64
	out, err := runPTX(t, src, l, Options{}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if uint32(out[0]) != 16 { // 12 static bytes, aligned up to 16
		t.Errorf("dyn starts at %d, want 16", uint32(out[0]))
	}
	l.Shared = 60 // one word short
	if _, err := runPTX(t, src, l, Options{}, nil, 1); err == nil || !strings.Contains(err.Error(), "out-of-bounds shared write") {
		t.Errorf("dynamic shared memory one word short: %v", err)
	}
	m, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if ks := m.Kernels(); len(ks) != 1 || ks[0].Name != "k" || ks[0].Shared != 12 || len(ks[0].Params) != 2 {
		t.Errorf("Kernels() = %+v", ks)
	}
}
