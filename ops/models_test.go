package ops_test

import (
	"testing"

	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/ops"
)

// TestModels runs the MLP, CNN block and encoder layer built with the kiln
// builder (internal/testmodels) on the weights torch used, and requires
// max|got-want| <= tol * max(1, max|want|) with tol 1e-5 from the data
// (torch computed in float64, the reference kernels in float32).
func TestModels(t *testing.T) {
	names := testmodels.ModelNames()
	if len(names) != 3 {
		t.Fatalf("models %v, want cnn, encoder and mlp", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			m, err := testmodels.LoadModel(name)
			if err != nil {
				t.Fatal(err)
			}
			g, err := m.Graph()
			if err != nil {
				t.Fatal(err)
			}
			feeds, err := m.Feeds()
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.Want()
			if err != nil {
				t.Fatal(err)
			}
			got, err := ops.Interpret(g, feeds)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d outputs, want %d", len(got), len(want))
			}
			for i := range want {
				if err := testmodels.CheckClose(got[i], want[i], m.Tol); err != nil {
					t.Errorf("output %d: %v", i, err)
				}
			}
		})
	}
}
