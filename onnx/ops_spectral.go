package onnx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Spectral ops: DFT and STFT are compositions of kiln's ops (graph.DFT,
// graph.STFT: a product with a constant matrix of cosines and sines);
// their lengths and steps must be known at import. MelWeightMatrix's
// inputs are scalars that decide its shape, so it is computed at import
// into a constant.

func init() {
	register("DFT", 17, one(mapDFT))
	register("STFT", 17, one(mapSTFT))
	register("MelWeightMatrix", 17, one(mapMelWeightMatrix))
}

// knownInt reads optional input i as one integer known at import (ok
// false when the input is absent).
func knownInt(c *ctx, i int, what string) (int, bool, error) {
	if !c.has(i) {
		return 0, false, nil
	}
	v, ok := c.scalar(i)
	if !ok {
		return 0, false, unsupportedf("%s (input %d) must be one value known at import time, but it is computed at run time", what, i)
	}
	if v != math.Trunc(v) || v < 0 || v > 1<<30 {
		return 0, false, fmt.Errorf("%s (input %d) = %v is not a length", what, i, v)
	}
	return int(v), true, nil
}

// mapDFT: opset 17's DFT (axis an attribute, dft_length input 1).
func mapDFT(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	n, _, err := knownInt(c, 1, "dft_length")
	if err != nil {
		return nil, err
	}
	ax, err := c.attrInt("axis", 1)
	if err != nil {
		return nil, err
	}
	inverse, err := c.attrBool("inverse", false)
	if err != nil {
		return nil, err
	}
	onesided, err := c.attrBool("onesided", false)
	if err != nil {
		return nil, err
	}
	if onesided && inverse {
		return nil, unsupportedf("onesided=1 with inverse=1 (a one-sided inverse needs the Hermitian half)")
	}
	if onesided && x.Shape.Rank() > 0 && x.Shape[x.Shape.Rank()-1] == 2 {
		return nil, unsupportedf("onesided=1 over a complex input")
	}
	if r := int64(x.Shape.Rank()); ax < -r || ax >= r-1 && ax >= 0 || ax == -1 {
		return nil, fmt.Errorf("attribute axis=%d: not a signal axis of rank-%d input %v", ax, r, x.Shape)
	}
	return c.g.DFT(x, int(ax), n, inverse, onesided), nil
}

// mapSTFT: frame_step (input 1) and frame_length (input 3) must be known
// at import; the window (input 2) may be computed at run time.
func mapSTFT(c *ctx) (*graph.Node, error) {
	signal, err := c.need(0)
	if err != nil {
		return nil, err
	}
	step, ok, err := knownInt(c, 1, "frame_step")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("missing required input 1 (frame_step)")
	}
	length, hasLength, err := knownInt(c, 3, "frame_length")
	if err != nil {
		return nil, err
	}
	window := c.in(2)
	switch {
	case window != nil && window.Shape.Rank() != 1:
		return nil, fmt.Errorf("window %v is not 1-D", window.Shape)
	case window != nil && hasLength && window.Shape[0] != length:
		return nil, fmt.Errorf("window of %d samples but frame_length %d", window.Shape[0], length)
	case window != nil:
		length = window.Shape[0]
	case !hasLength:
		return nil, fmt.Errorf("neither window (input 2) nor frame_length (input 3) gives the frame length")
	}
	onesided, err := c.attrBool("onesided", true)
	if err != nil {
		return nil, err
	}
	if onesided && signal.Shape.Rank() == 3 && signal.Shape[2] == 2 {
		return nil, unsupportedf("onesided=1 over a complex signal")
	}
	return c.g.STFT(signal, step, window, length, onesided), nil
}

// mapMelWeightMatrix computes the [dft_length/2+1, num_mel_bins] matrix
// of triangular mel filters at import: num_mel_bins+2 points evenly
// spaced in mel (2595·log10(1 + f/700)) from lower_edge_hertz to
// upper_edge_hertz, each mapped to the spectrogram bin
// floor((dft_length+1)·f / sample_rate); filter i rises from point i to
// point i+1 and falls to point i+2, as ONNX's reference.
func mapMelWeightMatrix(c *ctx) (*graph.Node, error) {
	var args [5]float64
	names := [5]string{"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"}
	for i, name := range names {
		v, ok := c.scalar(i)
		if !ok {
			return nil, unsupportedf("%s (input %d) must be one value known at import time: it decides the output's shape", name, i)
		}
		args[i] = v
	}
	mels, dft, rate, lo, hi := args[0], args[1], args[2], args[3], args[4]
	if mels < 1 || dft < 1 || rate <= 0 || mels > 1<<16 || dft > 1<<20 || mels != math.Trunc(mels) || dft != math.Trunc(dft) || !(lo >= 0 && lo <= hi) {
		return nil, fmt.Errorf("num_mel_bins %v, dft_length %v, sample_rate %v, edges [%v, %v] out of range", mels, dft, rate, lo, hi)
	}
	odt, err := c.attrInt("output_datatype", 1) // FLOAT
	if err != nil {
		return nil, err
	}
	dt, err := DType(int32(odt))
	if err != nil || dt == tensor.Bool {
		return nil, unsupportedf("output_datatype=%s", TypeName(int32(odt)))
	}
	nm, bins := int(mels), int(dft)/2+1
	toMel := func(f float64) float64 { return 2595 * math.Log10(1+f/700) }
	loMel, step := toMel(lo), (toMel(hi)-toMel(lo))/float64(nm+2)
	points := make([]int, nm+2)
	for i := range points {
		f := 700 * (math.Pow(10, (float64(i)*step+loMel)/2595) - 1)
		points[i] = int(math.Floor((dft + 1) * f / rate))
		if points[i] < 0 || points[i] >= bins {
			return nil, fmt.Errorf("mel point %d falls on bin %d, outside the %d spectrogram bins (upper_edge_hertz %v above sample_rate/2?)", i, points[i], bins, hi)
		}
	}
	w := make([]float64, bins*nm)
	for i := range nm {
		left, centre, right := points[i], points[i+1], points[i+2]
		if centre == left {
			w[centre*nm+i] = 1
		} else {
			for j := left; j <= centre; j++ {
				w[j*nm+i] = float64(j-left) / float64(centre-left)
			}
		}
		for j := centre; j < right; j++ {
			w[j*nm+i] = float64(right-j) / float64(right-centre)
		}
	}
	t, err := tensor.FromFloat64s(dt, tensor.Shape{bins, nm}, w)
	if err != nil {
		return nil, err
	}
	return c.g.Constant(t), nil
}
