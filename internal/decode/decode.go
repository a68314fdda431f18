// Package decode runs demo.DecoderStep graphs as a generator: a prefill
// program over the whole prompt and a decode program of one token, the
// key/value caches held in handles of the decode program between steps.
// LoadHF reads the config and weights of a Hugging Face Llama, Qwen2 or
// Mixtral checkpoint into the same decoder.
package decode

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/demo"
)

// Decoder is a compiled prefill program (PromptLen tokens) and decode
// program (one token) over the same weights. The decode program's cache
// inputs are GPU handles that each step feeds from its updated caches, so
// the caches stay where the program runs: on CUDA a step copies its token
// and position in and its logits out, nothing that grows with the cache
// (CompiledGraph.Transfers counts it); on the CPU they are host handles.
// The feed is still a copy per step (on the device, device to device):
// the step writes its row with Where, whose cache operand is not its
// first, so the plan cannot update a cache in its own bytes
// (Options.Feeds, plan.Residence).
type Decoder struct {
	Config    demo.DecoderConfig
	PromptLen int
	prefill   *kiln.CompiledGraph
	step      *kiln.CompiledGraph
	pos       int         // tokens in the decode program's cache
	stepIns   [][]float32 // RunSlots inputs of a decode step: token, pos, nil per handle
	prefIns   [][]float32
}

// New compiles the prefill and decode programs of c on sess and sets
// their weights (every param of demo.DecoderStep, by name).
func New(sess *kiln.Session, c demo.DecoderConfig, promptLen int, weights map[string][]float32) (*Decoder, error) {
	if promptLen < 1 || promptLen >= c.MaxSeq {
		return nil, fmt.Errorf("decode: a prompt of %d tokens needs a cache longer than it (MaxSeq %d)", promptLen, c.MaxSeq)
	}
	d := &Decoder{Config: c, PromptLen: promptLen}
	var err error
	if d.prefill, err = compile(sess, c, promptLen, weights); err != nil {
		return nil, err
	}
	if d.step, err = compile(sess, c, 1, weights); err != nil {
		d.prefill.Close()
		return nil, err
	}
	// The prefill starts from an empty cache (its rows are only read
	// after being written, but a handle must hold something); its
	// updated caches are outputs, handed to the decode program.
	zero := make([]float32, c.CacheShape().NumElements())
	for l := range c.Layers {
		for _, kind := range []string{"k", "v"} {
			if err := d.prefill.BindGPUHandle(demo.CacheName(kind, l), zero); err != nil {
				d.Close()
				return nil, err
			}
			if err := d.bindCache(kind, l, zero); err != nil {
				d.Close()
				return nil, err
			}
		}
	}
	if err := d.feedCaches(); err != nil {
		d.Close()
		return nil, err
	}
	d.stepIns = make([][]float32, 2+2*c.Layers)
	d.stepIns[0], d.stepIns[1] = make([]float32, 1), make([]float32, 1)
	d.prefIns = make([][]float32, 2+2*c.Layers)
	d.prefIns[0], d.prefIns[1] = make([]float32, promptLen), make([]float32, 1)
	return d, nil
}

func compile(sess *kiln.Session, c demo.DecoderConfig, s int, weights map[string][]float32) (*kiln.CompiledGraph, error) {
	g, err := demo.DecoderStep(c, s)
	if err != nil {
		return nil, err
	}
	cg, err := sess.Compile(g)
	if err != nil {
		return nil, err
	}
	for _, p := range g.Params() {
		w, ok := weights[p.Name]
		if !ok {
			cg.Close()
			return nil, fmt.Errorf("decode: no weights for %q", p.Name)
		}
		if err := cg.SetParam(p.Name, w); err != nil {
			cg.Close()
			return nil, err
		}
	}
	return cg, nil
}

// bindCache binds layer l's cache of kind "k" or "v" in the decode
// program.
func (d *Decoder) bindCache(kind string, l int, data []float32) error {
	return d.step.BindGPUHandle(demo.CacheName(kind, l), data)
}

// feedCaches makes every decode step's updated caches flow back into
// their handles.
func (d *Decoder) feedCaches() error {
	for l := range d.Config.Layers {
		if err := d.step.SetGPUHandleFeed(demo.CacheName("k", l), 1+2*l); err != nil {
			return err
		}
		if err := d.step.SetGPUHandleFeed(demo.CacheName("v", l), 2+2*l); err != nil {
			return err
		}
	}
	return nil
}

// Cache returns a copy of the decode program's cache of kind "k" or "v"
// of layer l.
func (d *Decoder) Cache(kind string, l int) ([]float32, error) {
	return d.step.ReadGPUHandle(demo.CacheName(kind, l))
}

// Pos is how many tokens the cache holds: the position of the next step.
func (d *Decoder) Pos() int { return d.pos }

// Programs are the compiled prefill and decode programs.
func (d *Decoder) Programs() (prefill, step *kiln.CompiledGraph) { return d.prefill, d.step }

// Prefill runs the prompt (PromptLen ids) from an empty cache, leaves its
// keys and values in the decode program's cache and returns the logits
// of every prompt position, [PromptLen, Vocab], a view valid until the
// next Prefill.
func (d *Decoder) Prefill(ids []int64) ([]float32, error) {
	if len(ids) != d.PromptLen {
		return nil, fmt.Errorf("decode: Prefill of %d ids, compiled for %d", len(ids), d.PromptLen)
	}
	for i, id := range ids {
		if err := d.checkID(id); err != nil {
			return nil, err
		}
		d.prefIns[0][i] = float32(id)
	}
	d.prefIns[1][0] = 0
	if _, err := d.prefill.RunSlots(d.prefIns...); err != nil {
		return nil, err
	}
	for l := range d.Config.Layers {
		for i, kind := range []string{"k", "v"} {
			if err := d.bindCache(kind, l, d.prefill.Output(1+2*l+i)); err != nil {
				return nil, err
			}
		}
	}
	d.pos = len(ids)
	return d.prefill.Output(0), nil
}

// Step runs one token at position Pos(), appends its keys and values to
// the cache and returns its logits [Vocab], a view valid until the next
// step. It does not allocate on the CPU.
func (d *Decoder) Step(id int64) ([]float32, error) {
	if err := d.checkID(id); err != nil {
		return nil, err
	}
	if d.pos >= d.Config.MaxSeq {
		return nil, fmt.Errorf("decode: the cache of %d tokens is full", d.Config.MaxSeq)
	}
	d.stepIns[0][0], d.stepIns[1][0] = float32(id), float32(d.pos)
	if _, err := d.step.RunSlots(d.stepIns...); err != nil {
		return nil, err
	}
	d.pos++
	return d.step.Output(0), nil
}

func (d *Decoder) checkID(id int64) error {
	if id < 0 || id >= int64(d.Config.Vocab) {
		return fmt.Errorf("decode: token id %d outside the vocabulary [0, %d)", id, d.Config.Vocab)
	}
	return nil
}

// Generate prefills prompt and greedily decodes n tokens (each the
// argmax of the logits before it), returning them. steps, when not nil,
// is called with each step's logits (a view valid during the call).
func (d *Decoder) Generate(prompt []int64, n int, steps func(i int, logits []float32)) ([]int64, error) {
	if len(prompt)+n > d.Config.MaxSeq {
		return nil, fmt.Errorf("decode: %d prompt and %d new tokens overflow the cache of %d", len(prompt), n, d.Config.MaxSeq)
	}
	logits, err := d.Prefill(prompt)
	if err != nil {
		return nil, err
	}
	v := d.Config.Vocab
	last := logits[(len(prompt)-1)*v:][:v]
	out := make([]int64, 0, n)
	for i := range n {
		if steps != nil {
			steps(i, last)
		}
		id := Argmax(last)
		out = append(out, id)
		if i == n-1 {
			break // the last token's own logits are not needed
		}
		if last, err = d.Step(id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Argmax is the index of the largest logit, the first of ties; a NaN
// never wins.
func Argmax(logits []float32) int64 {
	best, at := float32(math.Inf(-1)), int64(0)
	for i, x := range logits {
		if x > best {
			best, at = x, int64(i)
		}
	}
	return at
}

// Close releases both programs.
func (d *Decoder) Close() error {
	var err error
	for _, cg := range []*kiln.CompiledGraph{d.prefill, d.step} {
		if cg != nil {
			if e := cg.Close(); e != nil && err == nil {
				err = e
			}
		}
	}
	return err
}
