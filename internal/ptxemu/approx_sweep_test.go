package ptxemu

import (
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// TestSweepApproxBound reruns the F32 elementwise kernels with every
// approximate instruction off by the most the ISA allows: kiln's
// tolerances must hold on the worst hardware, not only on exact math.
func TestSweepApproxBound(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, e := range elementwiseCases() {
		k, err := ptx.EmitElementwise(e)
		if err != nil {
			t.Fatal(err)
		}
		ins := inputsFor(r, e, true)
		if e.Out != tensor.F32 {
			continue
		}
		got := sentinel(e.Out, e.Shape...)
		if err := runKernel(t, k, Options{Approx: ApproxBound}, got, ins...); err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		compareTensors(t, e.Name, got, refElementwise(t, e, ins), tolFor(e.Out))
	}
}
