package decode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/kilnml/kiln/internal/mmapfile"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/safetensors"
	"github.com/kilnml/kiln/tensor"
)

// HFModel is a checkpoint in the Hugging Face layout read into the
// decoder's config and params.
type HFModel struct {
	HFConfig
	// Weights are every param of demo.DecoderStep(Decoder, s) by name,
	// float32, projections transposed to [in, out] as the graph's MatMul
	// takes them.
	Weights map[string][]float32
	// Files are the safetensors files read, relative to the folder.
	Files []string
}

// Params counts the weights' elements.
func (m *HFModel) Params() int {
	n := 0
	for _, w := range m.Weights {
		n += len(w)
	}
	return n
}

// The files of a checkpoint folder.
const (
	hfConfigFile = "config.json"
	hfSingleFile = "model.safetensors"
	hfIndexFile  = "model.safetensors.index.json"
)

// LoadHF reads a Llama, Qwen2 or Mixtral checkpoint from dir: config.json
// (ParseHFConfig, the cache maxSeq tokens long) and the weights, from
// model.safetensors or, sharded, from the files model.safetensors.index.json
// maps each tensor to. Tensors are named as the Hugging Face models name
// them (model.embed_tokens.weight; model.layers.N.self_attn.{q,k,v,o}_proj.weight,
// and for Qwen2 the q, k and v biases; model.layers.N.mlp.{gate,up,down}_proj.weight;
// model.layers.N.{input,post_attention}_layernorm.weight; model.norm.weight;
// lm_head.weight unless tie_word_embeddings; for Mixtral, in place of
// the MLP, the router model.layers.N.block_sparse_moe.gate.weight [E, hidden]
// and the experts model.layers.N.block_sparse_moe.experts.E.{w1,w3,w2}.weight,
// gate, up and down), F32, F16 or BF16, widened
// to float32. A tensor missing, of the wrong shape or dtype, or left over
// (other than the rotary inv_freq buffers old checkpoints carry) is an
// error naming it.
func LoadHF(dir string, maxSeq int) (*HFModel, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("decode: checkpoint folder: %w", err)
	}
	defer root.Close()
	cfg, err := root.ReadFile(hfConfigFile)
	if err != nil {
		return nil, fmt.Errorf("decode: %s: %w", dir, err)
	}
	hc, err := ParseHFConfig(cfg, maxSeq)
	if err != nil {
		return nil, fmt.Errorf("decode: %s: %w", dir, err)
	}
	ws, err := openWeights(root)
	if err != nil {
		return nil, fmt.Errorf("decode: %s: %w", dir, err)
	}
	defer ws.close()
	m := &HFModel{HFConfig: hc, Weights: map[string][]float32{}, Files: ws.names}
	if err := m.read(ws); err != nil {
		return nil, fmt.Errorf("decode: %s: %w", dir, err)
	}
	return m, nil
}

// hfWeights are a checkpoint's open safetensors files and which holds
// each tensor.
type hfWeights struct {
	names []string
	files []*safetensors.File
	where map[string]int // tensor → index in files
	used  map[string]bool
	buf   []byte
}

func openWeights(root *os.Root) (*hfWeights, error) {
	ws := &hfWeights{where: map[string]int{}, used: map[string]bool{}}
	shards := map[string]string{} // tensor → file, from the index
	index, err := root.ReadFile(hfIndexFile)
	switch {
	case err == nil:
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(index, &idx); err != nil {
			return nil, fmt.Errorf("%s: %w", hfIndexFile, err)
		}
		if len(idx.WeightMap) == 0 {
			return nil, fmt.Errorf("%s: weight_map is missing or empty", hfIndexFile)
		}
		shards = idx.WeightMap
		for _, name := range shards {
			if !slices.Contains(ws.names, name) {
				ws.names = append(ws.names, name)
			}
		}
		sort.Strings(ws.names)
	case errors.Is(err, fs.ErrNotExist):
		ws.names = []string{hfSingleFile}
	default:
		return nil, err
	}
	byFile := map[string]int{}
	for i, name := range ws.names {
		f, err := safetensors.OpenIn(root, name) // os.Root: a name cannot leave the folder
		if err != nil {
			ws.close()
			if errors.Is(err, fs.ErrNotExist) && len(shards) == 0 {
				return nil, fmt.Errorf("no %s or %s", hfSingleFile, hfIndexFile)
			}
			return nil, err
		}
		ws.files = append(ws.files, f)
		byFile[name] = i
		for _, e := range f.Entries() {
			if j, dup := ws.where[e.Name]; dup {
				ws.close()
				return nil, fmt.Errorf("tensor %q is in both %s and %s", e.Name, ws.names[j], name)
			}
			ws.where[e.Name] = i
		}
	}
	for t, name := range shards {
		if i, ok := ws.where[t]; !ok || i != byFile[name] {
			ws.close()
			return nil, fmt.Errorf("%s maps tensor %q to %s, which does not hold it", hfIndexFile, t, name)
		}
	}
	return ws, nil
}

func (ws *hfWeights) close() {
	for _, f := range ws.files {
		f.Close()
	}
}

// get reads tensor name, which must have the given shape, as float32.
func (ws *hfWeights) get(name string, shape ...int) ([]float32, error) {
	i, ok := ws.where[name]
	if !ok {
		return nil, fmt.Errorf("tensor %q is missing", name)
	}
	ws.used[name] = true
	f := ws.files[i]
	e, _ := f.Entry(name)
	if !e.Shape.Equal(shape) {
		return nil, fmt.Errorf("tensor %q (%s) has shape %v, config.json makes it %v", name, ws.names[i], e.Shape, tensor.Shape(shape))
	}
	if e.DType != tensor.F32 && e.DType != tensor.F16 && e.DType != tensor.BF16 {
		return nil, fmt.Errorf("tensor %q (%s) is %s: kiln reads F32, F16 and BF16 weights", name, ws.names[i], e.FileDType)
	}
	t, err := f.Tensor(name)
	if err != nil {
		return nil, err
	}
	// Out of the mapping under a fault guard, into an aligned buffer.
	if ws.buf, err = mmapfile.CopyOut(ws.buf, t.Data); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	src, err := tensor.View(e.DType, e.Shape, ws.buf)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	dst := tensor.New(tensor.F32, e.Shape...)
	if err := tensor.Convert(dst, src); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	return dst.F32(), nil
}

// linear reads an nn.Linear weight [out, in] transposed to [in, out].
func (ws *hfWeights) linear(name string, in, out int) ([]float32, error) {
	w, err := ws.get(name, out, in)
	if err != nil {
		return nil, err
	}
	return transposed(w, out, in)
}

// transposed is the [cols, rows] transpose of the row-major w [rows, cols].
func transposed(w []float32, rows, cols int) ([]float32, error) {
	tr, err := asm.NewTranspose32([]int{rows, cols}, []int{1, 0}, nil, asm.Par{})
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(w))
	return out, tr.Run(words(out), words(w))
}

// words views float32s as their bit patterns, what Transpose32 moves.
func words(v []float32) []uint32 {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&v[0])), len(v))
}

// readExperts reads Mixtral's experts, model.layers.N.block_sparse_moe.experts.E.{w1,w3,w2}
// (gate, up, down nn.Linear weights), into the decoder's stacked params
// layerN.experts.{gate,up,down}: expert e's transposed matrix is block e.
func (m *HFModel) readExperts(ws *hfWeights) error {
	c := m.Decoder
	if c.Experts == 0 {
		return nil
	}
	for l := range c.Layers {
		for _, p := range []struct {
			to, from string
			in, out  int
		}{{"gate", "w1", c.Hidden, c.FFN}, {"up", "w3", c.Hidden, c.FFN}, {"down", "w2", c.FFN, c.Hidden}} {
			stacked := make([]float32, 0, c.Experts*p.in*p.out)
			for e := range c.Experts {
				w, err := ws.linear(fmt.Sprintf("model.layers.%d.block_sparse_moe.experts.%d.%s.weight", l, e, p.from), p.in, p.out)
				if err != nil {
					return err
				}
				stacked = append(stacked, w...)
			}
			m.Weights[fmt.Sprintf("layer%d.experts.%s", l, p.to)] = stacked
		}
	}
	return nil
}

// read fills m.Weights under demo.DecoderStep's param names.
func (m *HFModel) read(ws *hfWeights) error {
	c := m.Decoder
	hd := c.HeadDim()
	type item struct {
		to, from string
		in, out  int // a Linear's sizes; out alone: a vector
		linear   bool
	}
	items := []item{{to: "embeddings.word", from: "model.embed_tokens.weight"}, {to: "final_norm.scale", from: "model.norm.weight", out: c.Hidden}}
	for l := range c.Layers {
		hf, kl := fmt.Sprintf("model.layers.%d.", l), fmt.Sprintf("layer%d.", l)
		lin := func(to, from string, in, out int) item {
			return item{to: kl + to + ".weight", from: hf + from + ".weight", in: in, out: out, linear: true}
		}
		items = append(items,
			item{to: kl + "attn_norm.scale", from: hf + "input_layernorm.weight", out: c.Hidden},
			item{to: kl + "mlp_norm.scale", from: hf + "post_attention_layernorm.weight", out: c.Hidden},
			lin("q", "self_attn.q_proj", c.Hidden, c.Heads*hd),
			lin("k", "self_attn.k_proj", c.Hidden, c.KVHeads*hd),
			lin("v", "self_attn.v_proj", c.Hidden, c.KVHeads*hd),
			lin("o", "self_attn.o_proj", c.Heads*hd, c.Hidden))
		if c.Experts > 0 {
			items = append(items, lin("router", "block_sparse_moe.gate", c.Hidden, c.Experts))
		} else {
			items = append(items,
				lin("gate", "mlp.gate_proj", c.Hidden, c.FFN),
				lin("up", "mlp.up_proj", c.Hidden, c.FFN),
				lin("down", "mlp.down_proj", c.FFN, c.Hidden))
		}
		if c.QKVBias {
			for _, p := range []struct {
				n string
				w int
			}{{"q", c.Heads * hd}, {"k", c.KVHeads * hd}, {"v", c.KVHeads * hd}} {
				items = append(items, item{to: kl + p.n + ".bias", from: hf + "self_attn." + p.n + "_proj.bias", out: p.w})
			}
		}
	}
	for _, it := range items {
		var w []float32
		var err error
		switch {
		case it.linear:
			w, err = ws.linear(it.from, it.in, it.out)
		case it.out > 0:
			w, err = ws.get(it.from, it.out)
		default: // the embeddings
			w, err = ws.get(it.from, c.Vocab, c.Hidden)
		}
		if err != nil {
			return err
		}
		m.Weights[it.to] = w
	}
	if err := m.readExperts(ws); err != nil {
		return err
	}
	var err error
	if m.Tied {
		// The head is the embedding matrix; HF ignores a stored copy.
		ws.used["lm_head.weight"] = true
		m.Weights["lm_head.weight"], err = transposed(m.Weights["embeddings.word"], c.Vocab, c.Hidden)
	} else {
		m.Weights["lm_head.weight"], err = ws.linear("lm_head.weight", c.Hidden, c.Vocab)
	}
	if err != nil {
		return err
	}
	var extra []string
	for name := range ws.where {
		if !ws.used[name] && !strings.HasSuffix(name, ".rotary_emb.inv_freq") {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("%d tensor(s) that a %s of this config does not have: %s", len(extra), m.Type, strings.Join(extra[:min(len(extra), 5)], ", "))
	}
	return nil
}
