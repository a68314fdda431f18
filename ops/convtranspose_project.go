package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// A ConvTranspose of a one-cell input (every spatial axis of length 1)
// with no pads, dilation 1 and one group writes each output channel's
// kernel-sized plane as the input's channels times the weights: image
// b's output is x_b [1 × C] times W [C × M·taps], the weights as they
// are stored, which is a MatMul. A generator's first layer is this (the
// DCGAN projects its latent vector to 4×4: 1.4 GFLOP/s through the col
// path, which packed the 1 MiB of weights as the GEMM's A on every run).
// It runs on asm.Gemm with the weights as B, packed once where they are
// params (a GEMV for one image), the bias added per channel after.

// convTProject is the projection plan.
type convTProject struct {
	convTGeom
	gemm *asm.Gemm
	args asm.GemmArgs
	w    *packedWeight // nil: weights computed at run time, packed by each run
}

// prepareConvTProject returns the projection kernel of n, or nil where
// its geometry is not a projection.
func prepareConvTProject(n *graph.Node, g convTGeom, env Env, gv *asm.GemmVariant) (Kernel, error) {
	if g.inSz != 1 || g.groups != 1 {
		return nil, nil
	}
	for i := range 3 {
		if g.pb[i] != 0 || g.out[i] != g.k[i] || g.d[i] != 1 && g.k[i] > 1 {
			return nil, nil
		}
	}
	gm, err := asm.NewGemm(asm.GemmConfig{M: g.n, N: g.m * g.kSz, K: g.c, Alpha: 1}, gv, asm.Par{For: env.For, Threads: env.Threads})
	if err != nil {
		return nil, err
	}
	p := &convTProject{convTGeom: g, gemm: gm}
	if FromWeights(n.Inputs[1]) {
		p.w = newPackedWeight(n.Inputs[1], gm, env)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		p.args.A, p.args.C = ins[0].F32(), out.F32()
		err := p.w.run(p.gemm, &p.args, ins[1].F32())
		p.args.A, p.args.B, p.args.C = nil, nil, nil // keep no reference to the arena
		if err != nil || !p.bias {
			return err
		}
		y, bias := out.F32(), ins[2].F32()
		for i := range p.n * p.m { // plane i is channel i mod M's
			plane := y[i*p.kSz : (i+1)*p.kSz]
			for j := range plane {
				plane[j] += bias[i%p.m]
			}
		}
		return nil
	}, nil
}
