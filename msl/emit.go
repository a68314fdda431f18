package msl

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
)

// emitter writes the kernel of each descriptor kind msl covers. Its
// table is the one list of what Metal can lower: Emit dispatches through
// it and Ops derives from it.
var emitter = kdesc.NewEmitter("msl", "Metal", map[kdesc.Kind]func(kdesc.Desc) (*Kernel, error){
	kdesc.KindElementwise:   kdesc.Writes(EmitElementwise),
	kdesc.KindReduce:        kdesc.Writes(EmitReduce),
	kdesc.KindSoftmax:       kdesc.Writes(EmitSoftmax),
	kdesc.KindNorm:          kdesc.Writes(EmitNorm),
	kdesc.KindCopy:          kdesc.Writes(EmitCopy),
	kdesc.KindConcat:        kdesc.Writes(EmitConcat),
	kdesc.KindGather:        kdesc.Writes(EmitGather),
	kdesc.KindPad:           kdesc.Writes(EmitPad),
	kdesc.KindGemm:          kdesc.Writes(EmitGemm),
	kdesc.KindAttention:     kdesc.Writes(EmitAttention),
	kdesc.KindConv:          kdesc.Writes(EmitConv),
	kdesc.KindPool:          kdesc.Writes(EmitPool),
	kdesc.KindBatchNorm:     kdesc.Writes(EmitBatchNorm),
	kdesc.KindRoPE:          kdesc.Writes(EmitRoPE),
	kdesc.KindArg:           kdesc.Writes(EmitArg),
	kdesc.KindCumSum:        kdesc.Writes(EmitCumSum),
	kdesc.KindIndexing:      kdesc.Writes(EmitIndexing),
	kdesc.KindTopK:          kdesc.Writes(EmitTopK),
	kdesc.KindConvTranspose: kdesc.Writes(EmitConvTranspose),
	kdesc.KindResize:        kdesc.Writes(EmitResize),
})

// Emit writes the kernel of a descriptor (from kdesc.Describe); a Gemm
// with SimdGroup set gets the simdgroup_matrix kernel.
func Emit(d kdesc.Desc) (*Kernel, error) { return emitter.Emit(d) }

// EmitNode describes a graph node (kdesc.Describe) and writes its
// kernel; ins are the nodes its buffers after out read, in order.
func EmitNode(name string, n *graph.Node) (k *Kernel, ins []*graph.Node, err error) {
	return emitter.Lower(name, n)
}

// Ops lists the ops whose nodes Metal lowers to MSL kernels, in op
// order: the ops whose descriptor kind has a writer here and, for
// elementwise ops, an MSL formula. Any graph can be asked node by node
// with CheckNode, before compiling.
func Ops() []graph.Op { return emitter.Ops() }

// Supports reports whether Ops lists op.
func Supports(op graph.Op) bool { return emitter.Supports(op) }

// CheckNode reports why n would not lower to an MSL kernel, or nil when
// it would (or needs none: sources, views, empty values): what compiling
// for Metal would find, asked on any OS. It writes the kernel to learn
// it, so dtype and size limits count too.
func CheckNode(n *graph.Node) error { return emitter.Check(n) }
