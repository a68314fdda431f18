package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/demo"
)

// moeRouting is what `kiln generate --moe-capture` reports: the routing
// of the prompt's prefill, per MoE layer in forward order.
type moeRouting struct {
	Experts       int        `json:"experts"`
	ExpertsPerTok int        `json:"experts_per_token"`
	Layers        []moeLayer `json:"layers"`
}

// moeLayer is one MoE layer's routing of the prompt.
type moeLayer struct {
	// TopK holds, per prompt token, the k expert ids its router chose,
	// best first (TopK's order: ties to the lower id).
	TopK [][]uint32 `json:"topk"`
	// TokensPerExpert counts the prompt tokens routed to each expert.
	TokensPerExpert []int `json:"tokens_per_expert"`
}

// takeRouting reads the top-k capture and the residency stats of the
// prefill program's last forward. The prefill program runs only the
// prompt (measureDecode's warm-up and timed prefills are the same ids),
// so its last forward is the prompt's routing.
func takeRouting(prefill *kiln.CompiledGraph, c demo.DecoderConfig, tokens int) (*moeRouting, error) {
	ids, err := prefill.TakeMoETopKCapture()
	if err != nil {
		return nil, err
	}
	stats, err := prefill.TakeMoEResidencyStats()
	if err != nil {
		return nil, err
	}
	if len(ids) != len(stats.Layers) {
		return nil, fmt.Errorf("--moe-capture: %d layers captured, %d counted", len(ids), len(stats.Layers))
	}
	k := c.ExpertsPerTok
	r := &moeRouting{Experts: c.Experts, ExpertsPerTok: k, Layers: make([]moeLayer, len(ids))}
	for l, flat := range ids {
		if len(flat) != tokens*k {
			return nil, fmt.Errorf("--moe-capture: layer %d captured %d expert ids, want %d tokens × %d", l, len(flat), tokens, k)
		}
		r.Layers[l].TokensPerExpert = stats.Layers[l].PerExpert
		for t := range tokens {
			r.Layers[l].TopK = append(r.Layers[l].TopK, flat[t*k:(t+1)*k])
		}
	}
	return r, nil
}

// print writes the routing as text: per layer, each token's experts and
// the per-expert counts.
func (r *moeRouting) print(out io.Writer) {
	fmt.Fprintf(out, "MoE routing of the prompt (prefill): top %d of %d experts per token, best first\n", r.ExpertsPerTok, r.Experts)
	for l, ly := range r.Layers {
		toks := make([]string, len(ly.TopK))
		for t, ids := range ly.TopK {
			e := make([]string, len(ids))
			for j, id := range ids {
				e[j] = strconv.FormatUint(uint64(id), 10)
			}
			toks[t] = strings.Join(e, ",")
		}
		counts := make([]string, len(ly.TokensPerExpert))
		for e, n := range ly.TokensPerExpert {
			counts[e] = strconv.Itoa(n)
		}
		fmt.Fprintf(out, "moe layer %d: experts per token: %s\n", l, strings.Join(toks, " "))
		fmt.Fprintf(out, "moe layer %d: tokens per expert: %s\n", l, strings.Join(counts, " "))
	}
}
