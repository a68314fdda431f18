package ptxemu

import (
	"fmt"
	"strings"
	"testing"
)

// shfl.sync against the CUDA programming guide's description of the
// intrinsics built on it (__shfl_sync, __shfl_up_sync, __shfl_down_sync,
// __shfl_xor_sync with a width): an independent formulation of the
// ISA's clamp and segment-mask rules. CUDA encodes width w as
// c = (32-w)<<8 for up and ((32-w)<<8)|31 otherwise.

// cudaShfl returns the source lane and whether it was in range.
func cudaShfl(mode string, lane, b, w int) (int, bool) {
	seg := lane &^ (w - 1)
	switch mode {
	case "idx":
		return seg + b%w, true
	case "up":
		if lane-seg >= b {
			return lane - b, true
		}
	case "down":
		if lane-seg+b < w {
			return lane + b, true
		}
	case "bfly":
		// Earlier groups are reachable; later ones return the own value.
		if j := lane ^ b; j < seg+w {
			return j, true
		}
	}
	return lane, false
}

// shflKernel runs `shfl.sync.mode.b32 %r|%p, %v, b, c, mask` on 64
// threads with %v = 3·tid+7, storing r and p per thread.
func shflKernel(mode string, b, c int, mask uint32) string {
	return ptxModule(`
	.reg .b32 %v, %r, %pv;
	.reg .pred %p;
	.reg .b64 %o;`, fmt.Sprintf(`
	mad.lo.u32 %%v, %%gi, 3, 7;
	shfl.sync.%s.b32 %%r|%%p, %%v, %d, %d, %#x;
	selp.u32 %%pv, 1, 0, %%p;
	mul.wide.u32 %%o, %%gi, 8;
	add.u64 %%o, %%o, %%out;
	st.global.v2.u32 [%%o], {%%r, %%pv};`, mode, b, c, mask))
}

func TestShflModes(t *testing.T) {
	for _, c := range []struct {
		mode string
		b, w int
	}{
		{"idx", 5, 32}, {"idx", 3, 8}, {"idx", 19, 8}, {"up", 1, 32}, {"up", 3, 8}, {"down", 4, 32},
		{"down", 2, 16}, {"bfly", 16, 32}, {"bfly", 1, 2}, {"bfly", 8, 4}, {"bfly", 3, 8},
	} {
		cval := (32 - c.w) << 8
		if c.mode != "up" {
			cval |= 31
		}
		out, err := runPTX(t, shflKernel(c.mode, c.b, cval, 0xFFFFFFFF), launch1D(64), Options{}, nil, 64)
		if err != nil {
			t.Fatal(err)
		}
		for tid, o := range out {
			lane, warp := tid%32, tid/32
			j, ok := cudaShfl(c.mode, lane, c.b, c.w)
			want := uint64(3*(warp*32+j)+7) | uint64(b2u(ok))<<32
			if o != want {
				t.Errorf("shfl.%s b=%d width %d: thread %d got (%d, %v), want (%d, %v)", c.mode, c.b, c.w, tid,
					uint32(o), o>>32 != 0, uint32(want), ok)
				break
			}
		}
	}
}

// TestShflClamp: a clamp value without segments bounds the source lane
// (down/bfly/idx: j ≤ clamp; up: j ≥ clamp).
func TestShflClamp(t *testing.T) {
	for _, c := range []struct {
		mode        string
		b, clamp    int
		src         func(lane int) (int, bool)
		description string
	}{
		{"down", 4, 15, func(l int) (int, bool) {
			if l+4 <= 15 {
				return l + 4, true
			}
			return l, false
		}, "lanes past 11 keep their value"},
		{"up", 2, 5, func(l int) (int, bool) {
			if l-2 >= 5 {
				return l - 2, true
			}
			return l, false
		}, "lanes below 7 keep their value"},
		{"idx", 20, 10, func(l int) (int, bool) { return l, false }, "source 20 is past the clamp: every lane keeps its own"},
	} {
		out, err := runPTX(t, shflKernel(c.mode, c.b, c.clamp, 0xFFFFFFFF), launch1D(32), Options{}, nil, 32)
		if err != nil {
			t.Fatal(err)
		}
		for lane, o := range out {
			j, ok := c.src(lane)
			if want := uint64(3*j+7) | uint64(b2u(ok))<<32; o != want {
				t.Errorf("shfl.%s b=%d clamp %d (%s): lane %d got %#x, want %#x", c.mode, c.b, c.clamp, c.description, lane, o, want)
				break
			}
		}
	}
}

// TestShflMembermask: lanes 0-15 shuffle among themselves with mask
// 0xFFFF while lanes 16-31 take another path; reading a lane outside the
// mask is an error naming it.
func TestShflMembermask(t *testing.T) {
	src := func(b int) string {
		return ptxModule(`
	.reg .b32 %v, %r;
	.reg .pred %hi;
	.reg .b64 %o;`, fmt.Sprintf(`
	mad.lo.u32 %%v, %%gi, 3, 7;
	mov.u32 %%r, 0;
	setp.ge.u32 %%hi, %%gi, 16;
	@%%hi bra $skip;
	shfl.sync.idx.b32 %%r, %%v, %d, 31, 0xFFFF;
$skip:
	mul.wide.u32 %%o, %%gi, 8;
	add.u64 %%o, %%o, %%out;
	st.global.u32 [%%o], %%r;`, b))
	}
	out, err := runPTX(t, src(9), launch1D(32), Options{}, nil, 32)
	if err != nil {
		t.Fatal(err)
	}
	for lane, o := range out {
		want := uint64(3*9 + 7)
		if lane >= 16 {
			want = 0
		}
		if o != want {
			t.Errorf("lane %d = %d, want %d", lane, o, want)
		}
	}
	_, err = runPTX(t, src(20), launch1D(32), Options{}, nil, 32)
	if err == nil || !strings.Contains(err.Error(), "reads lane 20") || !strings.Contains(err.Error(), "thread (0,0,0)") {
		t.Errorf("reading lane 20 outside membermask 0xFFFF: %v", err)
	}
}

// TestWarpDivergenceErrors: a lane outside its own membermask, and a warp
// split between a shuffle and a barrier (a deadlock on hardware).
func TestWarpDivergenceErrors(t *testing.T) {
	notMember := ptxModule(`.reg .b32 %v;`, `
	shfl.sync.bfly.b32 %v, %gi, 1, 31, 0xFFFE;`)
	_, err := runPTX(t, notMember, launch1D(32), Options{}, nil, 0)
	if err == nil || !strings.Contains(err.Error(), "does not name it") {
		t.Errorf("lane 0 outside its membermask: %v", err)
	}
	split := ptxModule(`
	.reg .b32 %v;
	.reg .pred %hi;`, `
	setp.ge.u32 %hi, %gi, 16;
	@%hi bra $bar;
	shfl.sync.bfly.b32 %v, %gi, 1, 31, -1;
	bra.uni $end;
$bar:
	bar.sync 0;
$end:`)
	_, err = runPTX(t, split, launch1D(32), Options{}, nil, 0)
	if err == nil || !strings.Contains(err.Error(), "deadlock") || !strings.Contains(err.Error(), "shfl.sync") || !strings.Contains(err.Error(), "bar.sync") {
		t.Errorf("warp split between shfl and bar.sync: %v", err)
	}
}

// TestWarpReconverge: the upper half-warp shuffles among itself in a
// branch, then the whole warp shuffles: independent thread scheduling
// lets the halves arrive at different times, and both collectives
// complete. Two halves at different full-warp shuffles deadlock.
func TestWarpReconverge(t *testing.T) {
	src := ptxModule(`
	.reg .b32 %v, %r;
	.reg .pred %hi;
	.reg .b64 %o;`, `
	mov.u32 %v, %gi;
	setp.ge.u32 %hi, %gi, 16;
	@!%hi bra $join;
	shfl.sync.bfly.b32 %v, %v, 1, 31, 0xFFFF0000;
$join:
	shfl.sync.idx.b32 %r, %v, 17, 31, -1;
	mul.wide.u32 %o, %gi, 8;
	add.u64 %o, %o, %out;
	st.global.u32 [%o], %r;`)
	out, err := runPTX(t, src, launch1D(32), Options{}, nil, 32)
	if err != nil {
		t.Fatal(err)
	}
	for lane, v := range out {
		if v != 16 { // lane 17 holds lane 16's value after the butterfly
			t.Fatalf("lane %d = %d, want 16", lane, v)
		}
	}
	split := ptxModule(`
	.reg .b32 %v;
	.reg .pred %hi;`, `
	setp.ge.u32 %hi, %gi, 16;
	@%hi bra $other;
	shfl.sync.bfly.b32 %v, %gi, 1, 31, -1;
	bra.uni $end;
$other:
	shfl.sync.bfly.b32 %v, %gi, 2, 31, -1;
$end:`)
	if msg := mustErr(t, split, 32, Options{}); !strings.Contains(msg, "deadlock: 16 threads (first (0,0,0)) wait at line") {
		t.Errorf("halves at different shuffles: %s", msg)
	}
}
