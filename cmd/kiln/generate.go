package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/internal/decode"
)

const generateUsage = `usage: kiln generate DIR --prompt-ids 1,2,3 [--max-new-tokens N] [--threads T] [--device D] [--moe-capture] [--json]

Loads a Hugging Face Llama, Qwen2 or Mixtral checkpoint from DIR
(config.json, and model.safetensors or the shards
model.safetensors.index.json lists; F32, F16 or BF16 weights, computed in
float32), prefills the prompt and generates greedily. There is no
tokenizer: token ids in, token ids out. Prints each generated id with its
logit and its margin over the runner-up, the prefill time beside the GEMM
kernel's rate, and the decode rate beside its memory bound (on the CPU).
With --moe-capture (a mixture-of-experts model such as Mixtral) it also
prints, for the prompt's prefill, each MoE layer's top-k expert ids per
token (best first) and how many tokens each expert took.
`

func runGenerate(args []string) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	promptIDs := fs.String("prompt-ids", "", "the prompt: comma-separated token `ids`")
	n := fs.Int("max-new-tokens", 16, "tokens to generate greedily")
	var mf modelFlags
	fs.IntVar(&mf.threads, "threads", 0, "worker threads (0: KILN_THREADS or all cores)")
	fs.StringVar(&mf.device, "device", "cpu", "where it runs: `cpu`, cuda, cuda:N or metal")
	moeCapture := fs.Bool("moe-capture", false, "print each MoE layer's top-k expert ids per prompt token and tokens per expert (prefill)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object (ids, each step's top logit and margin, rates)")
	fs.Usage = func() { fmt.Fprint(stderr, generateUsage, "\nflags:\n"); fs.PrintDefaults() }
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("generate: one checkpoint folder expected, got %q", pos)
	}
	prompt, err := parseIDs(*promptIDs)
	if err != nil {
		return err
	}
	if *n < 1 {
		return usagef("--max-new-tokens %d: want at least 1", *n)
	}
	sess, err := mf.session()
	if err != nil {
		return err
	}
	t0 := time.Now()
	// A cache for the prompt and the new tokens (the last of which no
	// step needs, but decode.New wants a row past the prompt).
	m, err := decode.LoadHF(pos[0], len(prompt)+*n)
	if err != nil {
		return err
	}
	load := time.Since(t0)
	c := m.Decoder
	if *moeCapture && c.Experts == 0 {
		return fmt.Errorf("--moe-capture: %s (%s) has no MoE layers", pos[0], m.Type)
	}
	for _, id := range prompt {
		if id >= int64(c.Vocab) {
			return fmt.Errorf("--prompt-ids: token id %d is outside the vocabulary [0, %d) of %s", id, c.Vocab, pos[0])
		}
	}
	params := m.Params()
	t0 = time.Now()
	d, err := decode.New(sess, c, len(prompt), m.Weights)
	if err != nil {
		return err
	}
	defer d.Close()
	m.Weights = nil // the programs hold their own copies
	compile := time.Since(t0)
	prefill, _ := d.Programs()
	if *moeCapture {
		if err := prefill.EnableMoETopKCapture(c.Experts); err != nil {
			return err
		}
	}
	threads := mf.threads
	if threads == 0 {
		threads = exec.DefaultPool().Workers()
	}
	dev := sess.Device()
	r, _, _, err := measureDecode(d, prompt, *n, threads, dev, params)
	if err != nil {
		return err
	}
	var routing *moeRouting
	if *moeCapture {
		if routing, err = takeRouting(prefill, c, len(prompt)); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Checkpoint string      `json:"checkpoint"`
			ModelType  string      `json:"model_type"`
			Prompt     []int64     `json:"prompt_ids"`
			IDs        []int64     `json:"ids"`
			LoadMs     float64     `json:"load_ms"`
			CompileMs  float64     `json:"compile_ms"`
			Report     genReport   `json:"run"`
			MoE        *moeRouting `json:"moe,omitempty"`
		}{pos[0], m.Type, prompt, r.IDs(), ms(load), ms(compile), r, routing})
	}
	tied := ""
	if m.Tied {
		tied = ", tied embeddings"
	}
	experts := ""
	if c.Experts > 0 {
		experts = fmt.Sprintf(" × %d experts (top %d)", c.Experts, c.ExpertsPerTok)
	}
	fmt.Fprintf(stdout, "kiln generate: %s (%s%s): vocab %d, hidden %d, %d layers, %d heads (%d key/value), FFN %d%s; %d params on %v\n",
		pos[0], m.Type, tied, c.Vocab, c.Hidden, c.Layers, c.Heads, c.KVHeads, c.FFN, experts, params, dev)
	fmt.Fprintf(stdout, "loaded %s in %v, compiled prefill (%d tokens) and decode programs in %v\n",
		strings.Join(m.Files, ", "), load.Round(time.Millisecond), len(prompt), compile.Round(time.Millisecond))
	for i, s := range r.Steps {
		fmt.Fprintf(stdout, "token %d: id %d  logit %.4f  margin %.4f\n", i, s.ID, s.Top, s.Margin)
	}
	printRates(stdout, r, c)
	if routing != nil {
		routing.print(stdout)
	}
	fmt.Fprintf(stdout, "generated ids: %s\n", joinIDs(r.IDs()))
	return nil
}

// parseIDs reads --prompt-ids: one or more non-negative integers,
// comma-separated.
func parseIDs(s string) ([]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usagef("--prompt-ids: no prompt given (want ids such as 1,2,3)")
	}
	var ids []int64
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || id < 0 {
			return nil, usagef("--prompt-ids %q: %q is not a token id", s, f)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// joinIDs writes ids as --prompt-ids takes them.
func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}
