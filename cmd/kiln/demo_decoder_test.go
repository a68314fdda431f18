package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
)

// TestDemoDecoder runs `kiln demo -model decoder` at the tiny size: it
// prefills, decodes, prints the rates and the memory bound, and its
// check against the reference interpreter passes.
func TestDemoDecoder(t *testing.T) {
	var out bytes.Buffer
	err := runDecoderDemo(&out, decoderDemo{size: "tiny", prompt: 6, steps: 10, check: true, threads: 2, sess: kiln.NewSession(kiln.CPU)})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"prefill 6 tokens:", "decode 10 tokens:", "tokens/s", "memory bound:", "GEMM kernel at", "reference interpreter", ": ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := runDemo([]string{"-model", "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("-model nope: %v", err)
	}
	if err := runDecoderDemo(&out, decoderDemo{size: "huge", prompt: 6, steps: 10, sess: kiln.NewSession(kiln.CPU)}); err == nil {
		t.Error("-size huge: no error")
	}
}
