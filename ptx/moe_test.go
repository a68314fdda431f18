package ptx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// routedVariants covers EmitRouted: GroupedMatMul over rows and slots,
// MoE with one and several columns per thread and a partial last hidden
// chunk, every float dtype the GPU computes, I32 and I64 ids, and a size
// past 32-bit indices.
func routedVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(k *Kernel, err error) { ks = append(ks, must(t, k, err)) }
	for _, dt := range floatDTypes {
		for _, idt := range []tensor.DType{tensor.I32, tensor.I64} {
			for _, slot := range []bool{false, true} {
				add(EmitRouted(&Routed{Routed: kdesc.Routed{Name: fmt.Sprintf("gmm_%v_%v_%v", dt, idt, slot), Op: graph.OpGroupedMatMul,
					DType: dt, IDs: idt, T: 7, K: 2, E: 4, In: 40, Out: 33, PerSlot: slot}}))
			}
			for i, c := range []struct{ h, f int }{{24, 48}, {4096, 14336}, {1040, 9}} {
				add(EmitRouted(&Routed{Routed: kdesc.Routed{Name: fmt.Sprintf("moe_%v_%v_%d", dt, idt, i), Op: graph.OpMoE,
					DType: dt, IDs: idt, T: 5, K: 2, E: 8, In: c.h, Out: c.h, Hidden: c.f}}))
			}
		}
	}
	for _, idt := range []tensor.DType{tensor.I32, tensor.I64} { // the residency split
		add(EmitRouted(&Routed{Routed: kdesc.Routed{Name: "moe_split_" + idt.String(), Op: graph.OpMoE, DType: tensor.BF16, IDs: idt,
			T: 5, K: 2, E: 8, In: 2048, Out: 2048, Hidden: 1408}, Resident: 3}))
	}
	add(EmitRouted(&Routed{Routed: kdesc.Routed{Name: "moe_split_wide", Op: graph.OpMoE, DType: tensor.F16, IDs: tensor.I64,
		T: 16, K: 2, E: 64, In: 4096, Out: 4096, Hidden: 14336}, Resident: 40}))
	add(EmitRouted(&Routed{Routed: kdesc.Routed{Name: "moe_wide", Op: graph.OpMoE, DType: tensor.BF16, IDs: tensor.I64,
		T: 16, K: 2, E: 64, In: 4096, Out: 4096, Hidden: 14336}}))
	return ks
}

func TestRoutedKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, routedVariants(t))
}

// TestRoutedErrors: F64, ids that are not I32/I64, a token width past
// the MoE kernel's registers, an op that is not routed, and a residency
// split of a GroupedMatMul or of more experts than there are are errors.
func TestRoutedErrors(t *testing.T) {
	base := kdesc.Routed{Name: "r", Op: graph.OpMoE, DType: tensor.F32, IDs: tensor.I64, T: 2, K: 1, E: 2, In: 8, Out: 8, Hidden: 4}
	gmm := kdesc.Routed{Name: "g", Op: graph.OpGroupedMatMul, DType: tensor.F32, IDs: tensor.I32, T: 2, K: 1, E: 2, In: 3, Out: 4}
	for want, d := range map[string]Routed{"residency split": {Routed: gmm, Resident: 1}, "residency split of 3": {Routed: base, Resident: 3}} {
		if _, err := EmitRouted(&d); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want an error naming %q", d, err, want)
		}
	}
	for want, d := range map[string]kdesc.Routed{
		"dtype f64":       func() kdesc.Routed { d := base; d.DType = tensor.F64; return d }(),
		"expert ids of":   func() kdesc.Routed { d := base; d.IDs = tensor.F32; return d }(),
		"token width":     func() kdesc.Routed { d := base; d.In, d.Out = 20000, 20000; return d }(),
		"not a routed op": func() kdesc.Routed { d := base; d.Op = graph.OpMatMul; return d }(),
	} {
		if _, err := EmitRouted(&Routed{Routed: d}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want an error naming %q", d, err, want)
		}
	}
}
