package testmodels

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

//go:embed testdata/model_*.json
var modelFiles embed.FS

// ModelCase is one end-to-end reference: the builder config, the input and
// weight tensors by name, and the outputs torch computed in float64 from
// those (float32) values, stored as float32.
type ModelCase struct {
	Name    string                `json:"name"`
	Config  map[string]int        `json:"config"`
	Tol     float64               `json:"tol"` // for CheckClose
	Inputs  map[string]JSONTensor `json:"inputs"`
	Params  map[string]JSONTensor `json:"params"`
	Outputs []JSONTensor          `json:"outputs"`
}

// ModelNames lists the embedded models ("cnn", "encoder", "mlp").
func ModelNames() []string {
	ents, _ := modelFiles.ReadDir("testdata")
	var out []string
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), "model_")
		if name, ok2 := strings.CutSuffix(name, ".json"); ok && ok2 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// LoadModel reads the embedded reference of one model.
func LoadModel(name string) (*ModelCase, error) {
	raw, err := modelFiles.ReadFile("testdata/model_" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("testmodels: no model %q: %w", name, err)
	}
	var m ModelCase
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("testmodels: model %q: %w", name, err)
	}
	return &m, nil
}

// Graph builds the model's graph with its builder and config.
func (m *ModelCase) Graph() (*graph.Graph, error) {
	c := func(key string) int { return m.Config[key] }
	var g *graph.Graph
	switch m.Name {
	case "mlp":
		g = MLP(c("batch"), c("in"), c("hidden"), c("out"))
	case "cnn":
		g = CNNBlock(c("batch"), c("in_ch"), c("out_ch"), c("height"), c("width"))
	case "encoder":
		g = EncoderLayer(c("batch"), c("seq"), c("hidden"), c("heads"), c("ffn"))
	default:
		return nil, fmt.Errorf("testmodels: no builder for model %q", m.Name)
	}
	if err := graph.Verify(g); err != nil {
		return nil, err
	}
	return g, nil
}

// Feeds decodes the inputs and params into one map by name, as
// ops.Interpret takes them.
func (m *ModelCase) Feeds() (map[string]tensor.Tensor, error) {
	out := map[string]tensor.Tensor{}
	for _, set := range []map[string]JSONTensor{m.Inputs, m.Params} {
		for name, j := range set {
			t, err := j.Decode()
			if err != nil {
				return nil, fmt.Errorf("testmodels: %s feed %q: %w", m.Name, name, err)
			}
			out[name] = t
		}
	}
	return out, nil
}

// Want decodes the expected outputs.
func (m *ModelCase) Want() ([]tensor.Tensor, error) {
	out := make([]tensor.Tensor, len(m.Outputs))
	for i, j := range m.Outputs {
		t, err := j.Decode()
		if err != nil {
			return nil, fmt.Errorf("testmodels: %s output %d: %w", m.Name, i, err)
		}
		out[i] = t
	}
	return out, nil
}

// CheckClose compares got with want: same dtype and shape, and
// max|got-want| <= tol * max(1, max|want|) (one bound for the whole
// tensor, so tiny elements are judged on the tensor's scale). NaN in
// either fails.
func CheckClose(got, want tensor.Tensor, tol float64) error {
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
		return fmt.Errorf("got %v, want %v", got, want)
	}
	if len(got.Data) != len(want.Data) {
		return fmt.Errorf("got %d bytes, want %d", len(got.Data), len(want.Data))
	}
	g, w := got.Float64s(), want.Float64s()
	scale, worst, at := 1.0, 0.0, -1
	for i := range w {
		scale = math.Max(scale, math.Abs(w[i]))
		d := math.Abs(g[i] - w[i])
		if d != d { // NaN on either side
			return fmt.Errorf("element %d: got %v, want %v", i, g[i], w[i])
		}
		if d > worst {
			worst, at = d, i
		}
	}
	if worst > tol*scale {
		return fmt.Errorf("max abs error %.3g at element %d (got %v, want %v) exceeds %.3g = tol %.3g * scale %.3g",
			worst, at, g[at], w[at], tol*scale, tol, scale)
	}
	return nil
}
