package ptx

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// sigModule is a user module with a header and one entry signature; the
// checks never look inside the body.
func sigModule(header, params string) string {
	return header + "\n.visible .entry k(" + params + ")\n{\n\tret;\n}\n"
}

const sm70 = ".version 7.0\n.target sm_70\n.address_size 64"

func customSpec(src string, scalars ...any) *graph.CustomSpec {
	return &graph.CustomSpec{Name: "Op", Infer: graph.SameAsInput(0),
		PTX: &graph.CustomPTX{Module: src, Entry: "k", Scalars: scalars}}
}

// TestCheckCustomErrors: every mismatch between the module and what kiln
// passes (output pointer, one input pointer, the scalars) is an error
// naming the entry, the parameter and both types.
func TestCheckCustomErrors(t *testing.T) {
	good := ".param .u64 y, .param .u64 x, .param .f32 s, .param .u32 n"
	for _, c := range []struct {
		name, src string
		scalars   []any
		want      string
	}{
		{"missing entry", strings.Replace(sigModule(sm70, good), "entry k", "entry other", 1),
			[]any{float32(1), graph.CustomElems{}}, `no entry "k" in the module (entries: other)`},
		{"too few params", sigModule(sm70, ".param .u64 y, .param .u64 x, .param .f32 s"),
			[]any{float32(1), graph.CustomElems{}}, "entry k has 3 parameters, kiln passes 4 (output and 1 input pointers, 2 scalars)"},
		{"too many params", sigModule(sm70, good), []any{float32(1)},
			"entry k has 4 parameters, kiln passes 3"},
		{"pointer as f32", sigModule(sm70, ".param .u64 y, .param .f32 x, .param .f32 s, .param .u32 n"),
			[]any{float32(1), graph.CustomElems{}}, "entry k parameter 1 (x): want .u64 or .b64 for the pointer to input 0, have .f32"},
		{"32-bit output pointer", sigModule(sm70, ".param .u32 y, .param .u64 x, .param .f32 s, .param .u32 n"),
			[]any{float32(1), graph.CustomElems{}}, "entry k parameter 0 (y): want .u64 or .b64 for the output pointer, have .u32"},
		{"scalar type", sigModule(sm70, good), []any{float64(1), graph.CustomElems{}},
			"entry k parameter 2 (s): want .f64 for scalar 0 (float64), have .f32"},
		{"signedness", sigModule(sm70, good), []any{float32(1), int32(4)},
			"entry k parameter 3 (n): want .s32 or .b32 for scalar 1 (int32), have .u32"},
		{"elems as float", sigModule(sm70, ".param .u64 y, .param .u64 x, .param .f32 s, .param .f32 n"),
			[]any{float32(1), graph.CustomElems{}}, "parameter 3 (n): want .u32 or .s32 or .b32 or .u64 or .s64 or .b64 for scalar 1 (graph.CustomElems), have .f32"},
		{"struct param", sigModule(sm70, ".param .u64 y, .param .u64 x, .param .align 4 .b8 s[4], .param .u32 n"),
			[]any{float32(1), graph.CustomElems{}}, "parameter 2 (s): want .f32 for scalar 0 (float32), have .b8[4]"},
		{"old target", sigModule(".version 7.0\n.target sm_35\n.address_size 64", good),
			[]any{float32(1), graph.CustomElems{}}, "module .target sm_35 is not supported (want sm_50 or newer)"},
		{"no sm target", sigModule(".version 7.0\n.target texmode_independent\n.address_size 64", good),
			[]any{float32(1), graph.CustomElems{}}, "module .target texmode_independent is not supported"},
		{"no address size", sigModule(".version 7.0\n.target sm_80", good),
			[]any{float32(1), graph.CustomElems{}}, "module needs .address_size 64"},
		{"unparsable", sigModule(".target sm_80\n.address_size 64", good),
			[]any{float32(1), graph.CustomElems{}}, "module has no .version directive"},
	} {
		_, _, err := CheckCustom(customSpec(c.src, c.scalars...), 1)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "ptx: custom op Op: ") {
			t.Errorf("%s: %v\nwant %q", c.name, err, c.want)
		}
	}
	if _, _, err := CheckCustom(&graph.CustomSpec{Name: "CPUOnly"}, 1); err == nil || !strings.Contains(err.Error(), "CPUOnly has no PTX") {
		t.Errorf("no PTX: %v", err)
	}
}

// TestCustomOf: a node's launch takes the entry from the module, the
// default or given geometry, and resolves CustomElems to its element
// count (range-checked against the parameter's width).
func TestCustomOf(t *testing.T) {
	src := sigModule(".version 8.0\n.target sm_90a, texmode_independent\n.address_size 64",
		".param .b64 y, .param .u64 a, .param .u64 b, .param .s32 n, .param .f64 s, .param .b64 m")
	g := graph.New()
	x := g.Input("x", tensor.F32, 10, 100)
	spec := customSpec(src, graph.CustomElems{}, float64(0.25), graph.CustomElems{})
	y := g.Custom(spec, x, x)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	c, err := CustomOf(y)
	if err != nil {
		t.Fatal(err)
	}
	if c.Entry.Name != "k" || len(c.Entry.Params) != 6 || c.Info.Arch() != 90 || c.Module != src {
		t.Errorf("entry %+v, arch %d", c.Entry, c.Info.Arch())
	}
	// 1000 elements, 256 threads a block: ⌈1000/256⌉ = 4 blocks.
	if c.Launch.Grid != [3]int{4, 1, 1} || c.Launch.Block != [3]int{256, 1, 1} {
		t.Errorf("default launch %+v", c.Launch)
	}
	if len(c.Scalars) != 3 || c.Scalars[0] != uint64(1000) || c.Scalars[1] != 0.25 || c.Scalars[2] != uint64(1000) {
		t.Errorf("scalars %#v", c.Scalars)
	}
	if _, err := c.Entry.Pack(append([]any{uint64(1), uint64(2), uint64(3)}, c.Scalars...)...); err != nil {
		t.Errorf("Pack: %v", err)
	}
	spec.PTX.Block = 128
	if c, err := CustomOf(y); err != nil || c.Launch.Grid != [3]int{8, 1, 1} || c.Launch.Block != [3]int{128, 1, 1} {
		t.Errorf("Block 128: %+v %v", c, err)
	}
	spec.PTX.Launch = func(n int) (grid, block [3]int) { return [3]int{n / 100, 1, 1}, [3]int{32, 4, 1} }
	if c, err := CustomOf(y); err != nil || c.Launch.Grid != [3]int{10, 1, 1} || c.Launch.Block != [3]int{32, 4, 1} {
		t.Errorf("Launch func: %+v %v", c, err)
	}
	spec.PTX.Launch = func(n int) (grid, block [3]int) { return [3]int{1, 1, 1}, [3]int{2048, 1, 1} }
	if _, err := CustomOf(y); err == nil || !strings.Contains(err.Error(), "custom op Op") {
		t.Errorf("oversized block: %v", err)
	}
	if _, err := CustomOf(x); err == nil {
		t.Error("CustomOf(input): no error")
	}
	// The element count must fit the declared integer.
	big := graph.New()
	bx := big.Input("x", tensor.U8, 1<<16, 1<<15)
	by := big.Custom(customSpec(src, graph.CustomElems{}, float64(1), graph.CustomElems{}), bx, bx)
	if _, err := CustomOf(by); err == nil || !strings.Contains(err.Error(), "parameter 3 (n): 2147483648 elements do not fit .s32") {
		t.Errorf("overflow: %v", err)
	}
}
