package conformance

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/mslhost"
	"github.com/kilnml/kiln/msl"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// gap is a case a backend does not lower, with the reason: every case
// of op when cases is "", else the one case of that name.
type gap struct {
	backend string
	op      graph.Op
	cases   string
	reason  string
}

// unsupported lists every case a backend does not lower. The matrix
// fails for a case that does not lower and is not listed here, and for
// an entry whose case lowers (remove it: the backend has caught up).
var unsupported = []gap{
	{"msl-host", graph.OpCustom, "", "graph.CustomSpec carries CPU and PTX kernels only: a custom op has no Metal implementation"},
	{"msl-host", graph.OpReduceSum, "i32", "msl.EmitReduce reduces floats only (its simd_* and threadgroup exchange are float); CUDA has integer reductions"},
	{"msl-host", graph.OpReduceMax, "i32", "msl.EmitReduce reduces floats only"},
	{"msl-host", graph.OpReduceMin, "i32", "msl.EmitReduce reduces floats only"},
	{"msl-host", graph.OpReduceProd, "i32", "msl.EmitReduce reduces floats only"},
	// A scatter applies duplicate indices in order (the last update
	// wins, reductions fold in index order): CUDA's kernel has each
	// output element walk the updates that can reach it (ptx/scatter.go);
	// Metal has no such emitter yet (the gathers are lowered).
	{"msl-host", graph.OpScatterElements, "", "no MSL kernel: duplicate indices must be applied in order (a serial pass or per-dtype atomics)"},
	{"msl-host", graph.OpScatterND, "", "no MSL kernel: duplicate index tuples must be applied in order"},
	// The N-D pools (kdesc.PoolND) and MaxUnpool are lowered for CUDA
	// only (Metal's 2-D pools cover the common models; MaxUnpool's
	// duplicate indices need an ordered scatter).
	{"msl-host", graph.OpMaxPoolND, "", "no MSL emitter for kdesc.PoolND yet"},
	{"msl-host", graph.OpAvgPoolND, "", "no MSL emitter for kdesc.PoolND yet"},
	{"msl-host", graph.OpMaxUnpool, "", "no MSL kernel: duplicate indices must be applied in order (the last element wins)"},
	// The detection ops run on the CPU only so far (see kdesc.Unemitted;
	// CUDA lowers GridSample, RoiAlign and Det): NonMaxSuppression is a
	// sequential greedy selection whose result length depends on the
	// data, Det a pivoted LU (Metal).
	{"msl-host", graph.OpGridSample, "", "no MSL emitter for kdesc.GridSample yet"},
	{"msl-host", graph.OpRoiAlign, "", "no MSL emitter for kdesc.RoiAlign yet"},
	{"ptx-emu", graph.OpNonMaxSuppression, "", "no PTX kernel: a sequential greedy selection with a data-dependent result length"},
	{"msl-host", graph.OpNonMaxSuppression, "", "no MSL kernel: a sequential greedy selection with a data-dependent result length"},
	{"msl-host", graph.OpDet, "", "no MSL kernel: a pivoted LU per matrix, sequential in its columns"},
	// A run-time loop is a body program the host runs once per iteration,
	// reading the condition and trip count back each time: the GPU
	// drivers have no sub-program (nor a device-side loop) yet, so such a
	// graph runs on the CPU. LoopOutput only reads the Loop's value.
	{"ptx-emu", graph.OpLoop, "", "no CUDA lowering of run-time control flow: the body would be a sub-program the host relaunches per iteration, which the CUDA driver lacks"},
	{"msl-host", graph.OpLoop, "", "no Metal lowering of run-time control flow: the body would be a sub-program the host re-encodes per iteration, which the Metal driver lacks"},
	{"ptx-emu", graph.OpLoopOutput, "", "reads a Loop's packed value, which CUDA does not lower"},
	{"msl-host", graph.OpLoopOutput, "", "reads a Loop's packed value, which Metal does not lower"},
	// Quantized models (issue 24): CUDA lowers the quantization maps
	// the int32 GEMM and ConvInteger's direct int32 conv (ptx/quant.go,
	// ptx/quant_gemm.go); Metal has none of them yet.
	{"msl-host", graph.OpQuantizeLinear, "", "no MSL emitter for kdesc.Quantize yet"},
	{"msl-host", graph.OpDequantizeLinear, "", "no MSL emitter for kdesc.Quantize yet"},
	{"msl-host", graph.OpDynamicQuantizeLinear, "", "no MSL emitter for kdesc.Quantize yet (a whole-tensor min/max, then the map)"},
	{"msl-host", graph.OpMatMulInteger, "", "no MSL integer GEMM for kdesc.IntProduct yet"},
	{"msl-host", graph.OpConvInteger, "", "no MSL integer conv for kdesc.IntProduct yet"},
	{"msl-host", graph.OpDynQuantMatMul, "", "no MSL integer GEMM for kdesc.IntProduct yet"},
	// Mixture of experts (issue 26): CUDA runs the routed ops with a
	// simple kernel (ptx/moe.go: a dot per output element, MoE one block
	// per token) computing in f32, so not F64; Metal has none yet.
	{"ptx-emu", graph.OpGroupedMatMul, "slots i32 f64", "the routed kernels compute in f32: F64 is not lowered"},
	{"ptx-emu", graph.OpMoE, "f64 i32 ids", "the routed kernels compute in f32: F64 is not lowered"},
	{"msl-host", graph.OpGroupedMatMul, "", "no MSL emitter for kdesc.Routed yet (a grouped GEMM over per-expert row blocks)"},
	{"msl-host", graph.OpMoE, "", "no MSL emitter for kdesc.Routed yet: the routed SwiGLU experts run on the CPU"},
	{"ptx-emu", graph.OpQDQMatMul, "", "the PTX int32 GEMM (ptx/quant_gemm.go) has no QDQ operand loader yet (x quantized with its fixed scale and zero point, the float epilogue with per-column scales)"},
	{"msl-host", graph.OpQDQMatMul, "", "no MSL integer GEMM for kdesc.IntProduct yet"},
	{"ptx-emu", graph.OpQDQConv, "", "ConvInteger's PTX kernel (ptx/quant_gemm.go) has no QDQ form yet (x quantized in the kernel, the float epilogue)"},
	{"msl-host", graph.OpQDQConv, "", "no MSL integer conv for kdesc.IntProduct yet"},
}

// absentOK names the backends that may be missing on a host, by backend
// and GOOS, with the reason; a backend missing anywhere else fails the
// matrix.
var absentOK = map[string]string{
	"msl-host/windows": "the host build maps MSL's 64-bit long onto C++ long, 32 bits on Windows, so the MSL kernels are not run there",
}

// available reports why a backend cannot run on this host, or nil.
func available(name string) error {
	if name == "cuda" {
		return cudaAvailable()
	}
	if name == "msl-host" {
		if runtime.GOOS == "windows" {
			return errors.New("not run on Windows")
		}
		_, err := mslhost.Compiler()
		return err
	}
	return nil
}

// TestBackendOpMatrix runs every op of ops' catalogue on every backend
// and compares each result with ops.Interpret (the reference kernels):
//
//   - cpu: a CPU session's compiled program, its fast kernels where they
//     take the node (fusion off: each case's graph is what runs);
//   - ptx-emu: the CUDA lowering (cuda.Lower, the backend's own) run on
//     the PTX emulator, internal/ptxemu;
//   - msl-host: the Metal lowering (metal.Lower) run as C++ on the host,
//     internal/mslhost, in both GEMM variants where they differ;
//   - cuda: the CUDA lowering again, on a real NVIDIA GPU (cuda:0), where
//     the host has one (KILN_TEST_REQUIRE_GPU=1 makes its absence a
//     failure); it shares ptx-emu's unsupported entries.
//
// Floats must agree within the op's catalogue tolerance (relative to
// 1+|reference|; one ulp of the output more for F16 and BF16) through
// internal/approx, so NaN matches only NaN and an infinity only itself;
// integers and Bool exactly. A GPU backend's CheckNode must agree with
// its lowering. A case a backend does not lower must be listed in
// unsupported with the reason.
//
// Adding an op to the matrix:
//
//  1. A unary or binary elementwise op needs nothing: unaryCases and
//     binaryCases (cases_elementwise_test.go) take every such op of
//     graph.Ops, in the dtypes its catalogue entry lists. Give it a
//     domain (unaryInputs, binaryInputs) or attributes (unaryApply)
//     when [-3, 3) or none are wrong for it.
//  2. Any other op: add opCase rows to otherCases (cases_test.go), each
//     a small graph through the builder: a broadcast where the op
//     broadcasts, another dtype, a wide row or several tiles where its
//     kernels change strategy. A fused op is built as the pattern the
//     fusion passes turn into it, then b.fused(op) checks they did.
//  3. Run the test. A catalogue op with no case fails; a backend that
//     does not lower a case fails with its lowering's error: lower it,
//     or add a gap to unsupported with the reason.
func TestBackendOpMatrix(t *testing.T) {
	start := time.Now()
	cases := matrixCases()
	checkRows(t, cases)
	ps := prepare(t, cases)
	listed := map[int]bool{} // indices into unsupported that matched a case
	ran := map[string]bool{} // backends run (a -run pattern may leave some out)
	var summary []string
	for _, be := range backends {
		if err := available(be.name); err != nil {
			if be.name == "msl-host" && runtime.GOOS != "windows" && !mslhost.CompilerRequired() {
				// A machine with Go alone: as every host-run test, skip
				// the column, saying so (CI sets KILN_TEST_REQUIRE_CXX=1).
				t.Logf("%s: not run, %v (KILN_TEST_REQUIRE_CXX=1 makes this a failure)", be.name, err)
				summary = append(summary, be.name+": not run here (no C++ compiler)")
				continue
			}
			if be.name == "cuda" && !cudaRequired() {
				t.Logf("%s: not run, %v (KILN_TEST_REQUIRE_GPU=1 makes this a failure)", be.name, err)
				summary = append(summary, be.name+": not run here (no GPU)")
				continue
			}
			if why, ok := absentOK[be.name+"/"+runtime.GOOS]; ok {
				t.Logf("%s: not run on this host (%v): %s", be.name, err, why)
				summary = append(summary, be.name+": not run here")
				continue
			}
			t.Errorf("%s cannot run here: %v (a backend may be absent only where absentOK says why)", be.name, err)
			continue
		}
		t.Run(be.name, func(t *testing.T) {
			ran[be.name] = true
			began := time.Now()
			rs := be.run(t, ps)
			count := map[graph.Op]map[string]int{} // an op's cases by outcome
			var gaps []string
			for i, p := range ps {
				s, gi := judge(t, be, p, rs[i])
				if gi >= 0 {
					listed[gi] = true
					gaps = append(gaps, fmt.Sprintf("%s (%s)", p.name, unsupported[gi].reason))
				}
				if count[p.c.op] == nil {
					count[p.c.op] = map[string]int{}
				}
				count[p.c.op][s]++
			}
			var pass, some, none, fail int
			for _, c := range count {
				switch {
				case c["fail"] > 0:
					fail++
				case c["listed"] == 0:
					pass++
				case c["pass"] > 0:
					some++
				default:
					none++
				}
			}
			line := fmt.Sprintf("%s: %d ops pass every case, %d pass all but listed cases, %d are listed as not lowered at all, %d fail (%d cases listed); %v",
				be.name, pass, some, none, fail, len(gaps), time.Since(began).Round(time.Millisecond))
			summary = append(summary, line)
			t.Log(line)
			for _, g := range gaps {
				t.Logf("  not lowered, listed: %s", g)
			}
		})
	}
	for i, g := range unsupported {
		if ran[g.backend] && !listed[i] {
			t.Errorf("unsupported lists %s %v/%q, which no case matched: remove or correct the entry", g.backend, g.op, g.cases)
		}
	}
	t.Logf("%d ops × %d backends, %d cases: %s; %v in all", len(catalogueOps()), len(backends), len(cases),
		strings.Join(summary, "; "), time.Since(start).Round(time.Millisecond))
}

// checkRows fails for an op of graph's list with no kernel in ops'
// catalogue, a catalogue op with no case, and a case name used twice.
func checkRows(t *testing.T, cases []opCase) {
	t.Helper()
	for _, op := range append(append(graph.Ops(), graph.FusedOps()...), graph.OpCustom) {
		if _, err := ops.Lookup(op); err != nil && !op.IsSource() {
			t.Errorf("graph has op %v, ops' catalogue no kernel for it: %v", op, err)
		}
	}
	seen := map[string]bool{}
	for _, c := range cases {
		name := c.op.String() + "/" + c.name
		if seen[name] {
			t.Errorf("case %s is written twice", name)
		}
		seen[name] = true
	}
	for _, op := range catalogueOps() {
		if !slices.ContainsFunc(cases, func(c opCase) bool { return c.op == op }) {
			t.Errorf("%v is in ops' catalogue but has no case in the matrix: add one (see TestBackendOpMatrix)", op)
		}
	}
	for _, g := range unsupported {
		if g.reason == "" {
			t.Errorf("unsupported entry %s %v/%q gives no reason", g.backend, g.op, g.cases)
		}
		if !slices.ContainsFunc(backends, func(b backend) bool { return b.name == g.backend }) {
			t.Errorf("unsupported entry names backend %q, which the matrix does not have", g.backend)
		}
	}
}

// prepare builds every case with its own seed (from its name, so adding
// a case changes no other's data), computes its reference outputs and
// compiles it for the CPU with fusion off.
func prepare(t *testing.T, cases []opCase) []*prepared {
	t.Helper()
	sess := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: &fuse.Options{Off: true}})
	ps := make([]*prepared, len(cases))
	for i, c := range cases {
		name := c.op.String() + "/" + c.name
		h := fnv.New64a()
		h.Write([]byte(name))
		b := newBuilder(h.Sum64())
		c.build(b)
		if err := errors.Join(b.err, b.g.Err()); err != nil {
			t.Fatalf("%s: building the case: %v", name, err)
		}
		if !slices.ContainsFunc(b.g.Nodes, func(n *graph.Node) bool { return n.Op == c.op }) {
			t.Fatalf("%s: the case's graph has no %v node", name, c.op)
		}
		want, err := ops.Interpret(b.g, b.feeds)
		if err != nil {
			t.Fatalf("%s: the reference: %v", name, err)
		}
		cg, err := sess.Compile(b.g)
		if err != nil {
			t.Errorf("%s: compiling for the CPU: %v", name, err)
		} else {
			t.Cleanup(func() { cg.Close() })
		}
		ps[i] = &prepared{c: c, name: name, feeds: b.feeds, want: want, cg: cg, err: err}
	}
	return ps
}

// gapFor is the index of the unsupported entry covering a case, or -1.
// The cuda column runs the lowering the ptx-emu column does, so it has
// ptx-emu's gaps.
func gapFor(be string, c opCase) int {
	if be == "cuda" {
		be = "ptx-emu"
	}
	return slices.IndexFunc(unsupported, func(g gap) bool {
		return g.backend == be && g.op == c.op && (g.cases == "" || g.cases == c.name)
	})
}

// judge checks one backend's results for one case against the
// reference and the unsupported table. It returns "pass", "listed" or
// "fail", and the index of the unsupported entry that covers the case
// (-1 for none).
func judge(t *testing.T, be backend, p *prepared, rs []result) (string, int) {
	t.Helper()
	gi := gapFor(be.name, p.c)
	switch {
	case p.err != nil:
		return "fail", gi // reported by prepare
	case len(rs) == 0:
		t.Errorf("%s: %s gave no result", p.name, be.name)
		return "fail", gi
	}
	lowerErr := rs[0].lowerErr
	if be.check != nil {
		var checkErr error
		for _, n := range p.cg.Graph().Nodes {
			checkErr = errors.Join(checkErr, be.check(n))
		}
		if (checkErr == nil) != (lowerErr == nil) {
			t.Errorf("%s: %s's CheckNode says %v, its lowering %v", p.name, be.name, checkErr, lowerErr)
		}
	}
	switch {
	case lowerErr != nil && gi < 0:
		t.Errorf("%s: %s does not lower it: %v\n\tlower it, or list it in unsupported with the reason", p.name, be.name, lowerErr)
		return "fail", gi
	case lowerErr != nil:
		return "listed", gi
	case gi >= 0:
		t.Errorf("%s: unsupported lists it for %s (%s), but it lowers: remove the entry", p.name, be.name, unsupported[gi].reason)
		return "fail", -1
	}
	ok := true
	for v, r := range rs {
		what := be.name
		if len(rs) > 1 {
			what = fmt.Sprintf("%s variant %d", be.name, v)
		}
		if r.runErr != nil {
			t.Errorf("%s: %s: %v", p.name, what, r.runErr)
			ok = false
			continue
		}
		outs := p.cg.Graph().Outputs()
		if len(r.outs) != len(outs) {
			t.Errorf("%s: %s gave %d outputs, want %d", p.name, what, len(r.outs), len(outs))
			ok = false
			continue
		}
		for k, o := range outs {
			got, err := tensor.View(o.DType, o.Shape, r.outs[k])
			if err != nil {
				t.Errorf("%s: %s output %d: %v", p.name, what, k, err)
				ok = false
				continue
			}
			ok = compare(t, fmt.Sprintf("%s: %s output %d", p.name, what, k), got, p.want[k], tolerance(p.c.op, o.DType)) && ok
		}
	}
	if ok {
		return "pass", -1
	}
	return "fail", -1
}

// tolerance is the relative error allowed an output of dt from a
// case of op: the op's catalogue tolerance, plus one ulp of a half
// precision output (the backends round once from F32, the reference's
// F16 and BF16 path may round twice).
func tolerance(op graph.Op, dt tensor.DType) float64 {
	e, err := ops.Lookup(op)
	if err != nil {
		return 0
	}
	switch dt {
	case tensor.F16:
		return e.Tol + 0x1p-10
	case tensor.BF16:
		return e.Tol + 0x1p-7
	}
	return e.Tol
}

// compare checks got against want: integers and Bool exactly, floats
// within tol·(1+|want|), NaN only against NaN (approx.Close). It
// reports the first few mismatches and returns whether all agreed.
func compare(t *testing.T, what string, got, want tensor.Tensor, tol float64) bool {
	t.Helper()
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
		t.Errorf("%s: %v%v, the reference %v%v", what, got.DType, got.Shape, want.DType, want.Shape)
		return false
	}
	g, w := got.Float64s(), want.Float64s()
	bad := 0
	for i := range g {
		var same bool
		switch {
		case got.DType == tensor.Bool:
			same = (g[i] != 0) == (w[i] != 0)
		case !got.DType.IsFloat():
			same = g[i] == w[i]
		default:
			same = approx.Close(g[i], w[i], tol*(1+math.Abs(w[i])))
		}
		if !same {
			if bad++; bad <= 5 {
				t.Errorf("%s [%d of %v]: %v, the reference %v (tolerance %g)", what, i, got.Shape, g[i], w[i], tol)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(g))
	}
	return bad == 0
}

// The GPU backends' own op lists (kdesc.Emitter.Ops through ptx.Ops and
// msl.Ops) must agree with the matrix: an op they leave out is listed
// for every case.
func TestBackendOpLists(t *testing.T) {
	for _, be := range []struct {
		name     string
		supports func(graph.Op) bool
	}{{"ptx-emu", ptx.Supports}, {"msl-host", msl.Supports}} {
		for _, op := range catalogueOps() {
			if be.supports(op) {
				continue
			}
			if gi := gapFor(be.name, opCase{op: op}); gi < 0 || unsupported[gi].cases != "" {
				t.Errorf("%s's op list leaves out %v, but unsupported does not list every case of it", be.name, op)
			}
		}
	}
}
