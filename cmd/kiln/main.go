// Command kiln is kiln's command-line tool.
//
//	kiln info      version, platform, CPU features and kernel variants
//	kiln demo      compile and run a built-in MiniLM-sized encoder (-model decoder: a Llama-style generator)
//	kiln run       run an ONNX model on .npy inputs, write .npy outputs
//	kiln bench     time an ONNX model: median, p90 and min latency
//	kiln generate  greedy generation from a Hugging Face Llama, Qwen2 or
//	               Mixtral checkpoint folder (safetensors), token ids in and
//	               out; --moe-capture prints the prompt's expert routing
//	kiln inspect   an ONNX model's ops, fusion, memory plan and kernels;
//	               with --device cuda or metal, the nodes that would not lower
//
// Exit status: 0 on success, 1 when the command fails (a missing or bad
// file, a model kiln cannot import, an input of the wrong shape), 2 for a
// bad command line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

var commands = map[string]func(args []string) error{
	"info":     runInfo,
	"demo":     runDemo,
	"run":      runRun,
	"bench":    runBench,
	"generate": runGenerate,
	"inspect":  runInspect,
}

const usage = `usage: kiln <command> [flags]

  info      version, platform, CPU features and kernel variants
  demo      compile and run a built-in MiniLM-sized encoder (-model decoder: a Llama-style generator)
  run       kiln run model.onnx [--input name=file.npy ...] [--output dir]
  bench     kiln bench model.onnx [--device D] [--threads N] [--runs N] [--warmup N]
  inspect   kiln inspect model.onnx [--device D]
  generate  kiln generate DIR --prompt-ids 1,2,3 [--max-new-tokens N] [--threads T] [--moe-capture] [--json]
            (a Hugging Face Llama, Qwen2 or Mixtral checkpoint folder; greedy, token ids in and out;
            --moe-capture: each MoE layer's top-k expert ids per prompt token and tokens per expert)

kiln <command> -h describes a command's flags.`

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	err := commands[os.Args[1]](os.Args[2:])
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "kiln:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "kiln:", err)
		os.Exit(1)
	}
}
