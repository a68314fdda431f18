package ptx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// convTransposeDesc is a ConvTranspose descriptor with the output the
// geometry gives (kdesc.ConvTranspose.Check's formula).
func convTransposeDesc(name string, dt tensor.DType, in, kern []int, m, groups int, strides, dil, pads []int, bias bool) kdesc.ConvTranspose {
	sp := len(kern)
	out := []int{in[0], m}
	for a := range sp {
		out = append(out, strides[a]*(in[2+a]-1)+dil[a]*(kern[a]-1)+1-pads[a]-pads[sp+a])
	}
	return kdesc.ConvTranspose{Name: name, DType: dt, In: in, Kernel: kern, M: m, Groups: groups,
		Strides: strides, Dilations: dil, Pads: pads, Out: out, Bias: bias}
}

// convTransposeVariants: 1-D to 3-D, groups, dilation, negative pads
// (the immediates ptxas must take), every float dtype, and one past
// 2³¹/2 elements (64-bit indexing).
func convTransposeVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	for _, dt := range floatDTypes {
		for i, d := range []kdesc.ConvTranspose{
			convTransposeDesc("", dt, []int{1, 64, 32, 32}, []int{2, 2}, 32, 1, []int{2, 2}, []int{1, 1}, []int{0, 0, 0, 0}, true),
			convTransposeDesc("", dt, []int{2, 4, 5, 4}, []int{3, 3}, 6, 2, []int{2, 2}, []int{1, 1}, []int{1, -1, 0, -1}, false),
			convTransposeDesc("", dt, []int{2, 3, 8}, []int{4}, 2, 1, []int{3}, []int{2}, []int{1, -2}, true),
			convTransposeDesc("", dt, []int{1, 2, 3, 4, 3}, []int{2, 3, 2}, 4, 2, []int{2, 1, 2}, []int{1, 2, 1}, []int{0, 1, 0, -1, 0, 1}, true),
		} {
			d.Name = fmt.Sprintf("convtranspose_%v_%d", dt, i)
			k, err := EmitConvTranspose(&ConvTranspose{ConvTranspose: d})
			ks = append(ks, must(t, k, err))
		}
	}
	wide := convTransposeDesc("convtranspose_wide", tensor.F32, []int{128, 64, 256, 256}, []int{2, 2}, 32, 1, []int{2, 2}, []int{1, 1}, []int{0, 0, 0, 0}, true)
	k, err := EmitConvTranspose(&ConvTranspose{ConvTranspose: wide, Block: 128})
	k = must(t, k, err)
	if !strings.Contains(k.Entry(), "mad.lo.s64") || k.Launch.Block[0] != 128 {
		t.Errorf("%s: 2³⁰ outputs, block %v: want 64-bit indices and 128 threads", k.Name, k.Launch.Block)
	}
	return append(ks, k)
}

func TestConvTransposeAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, convTransposeVariants(t))
}

// TestConvTransposeErrors: a dtype the kernel lacks and a geometry that
// does not hold are errors naming the node.
func TestConvTransposeErrors(t *testing.T) {
	ok := convTransposeDesc("ct", tensor.F32, []int{1, 4, 3, 3}, []int{2, 2}, 4, 2, []int{2, 2}, []int{1, 1}, []int{0, 0, 0, 0}, false)
	bad := func(f func(d *kdesc.ConvTranspose)) *ConvTranspose {
		d := ok
		d.In, d.Out, d.Strides = append([]int(nil), ok.In...), append([]int(nil), ok.Out...), append([]int(nil), ok.Strides...)
		f(&d)
		return &ConvTranspose{ConvTranspose: d}
	}
	if _, err := EmitConvTranspose(&ConvTranspose{ConvTranspose: ok}); err != nil {
		t.Fatalf("the valid descriptor: %v", err)
	}
	for name, c := range map[string]*ConvTranspose{
		"f64":        bad(func(d *kdesc.ConvTranspose) { d.DType = tensor.F64 }),
		"groups":     bad(func(d *kdesc.ConvTranspose) { d.Groups = 3 }),
		"output":     bad(func(d *kdesc.ConvTranspose) { d.Out[3]++ }),
		"stride 0":   bad(func(d *kdesc.ConvTranspose) { d.Strides[0] = 0 }),
		"4 spatial":  bad(func(d *kdesc.ConvTranspose) { d.In = append(d.In, 2, 2) }),
		"channels m": bad(func(d *kdesc.ConvTranspose) { d.Out[1] = 5 }),
	} {
		if _, err := EmitConvTranspose(c); err == nil || !strings.Contains(err.Error(), "ct") && name != "f64" {
			t.Errorf("%s: error %v, want one naming ct", name, err)
		}
	}
}
