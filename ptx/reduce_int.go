package ptx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// intReduceOps are the integer reductions: the instruction (its type
// appended) and the identity. Sums and products wrap like the reference
// (I8/U8 accumulate in s32 and keep their low byte on store, the same
// result modulo 2^8); there is no integer ReduceMean on the CPU either.
var intReduceOps = map[graph.Op]struct {
	ins        string
	id32, id64 string
}{
	graph.OpReduceSum:  {"add", "0", "0"},
	graph.OpReduceProd: {"mul.lo", "1", "1"},
	graph.OpReduceMax:  {"max", "-2147483648", "-9223372036854775808"},
	graph.OpReduceMin:  {"min", "2147483647", "9223372036854775807"},
}

// reduceSpec picks a reduction's register type, instruction and identity
// immediate for op over dt.
func reduceSpec(name string, op graph.Op, dt tensor.DType) (redReg, string, string, error) {
	if dt.IsFloat() {
		if err := floatOnly(dt); err != nil {
			return redReg{}, "", "", err
		}
		spec, ok := reduceOps[op]
		if !ok {
			return redReg{}, "", "", fmt.Errorf("ptx: %s: %v is not a reduction", name, op)
		}
		return regF32, spec.ins, fimm(spec.identity), nil
	}
	k, err := kindOf(dt)
	if err != nil || k == kPred {
		return redReg{}, "", "", fmt.Errorf("ptx: %s: %v of %v is not supported on the GPU", name, op, dt)
	}
	spec, ok := intReduceOps[op]
	if !ok {
		return redReg{}, "", "", fmt.Errorf("ptx: %s: %v of integers is not supported (%v)", name, op, dt)
	}
	if k == kS64 {
		return redReg{cB64, "s64", 8}, spec.ins + ".s64", spec.id64, nil
	}
	return redReg{cB32, "s32", 4}, spec.ins + ".s32", spec.id32, nil
}
