package msl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kilnml/kiln/internal/kdesc"
)

// Resize is a kdesc.Resize. Buffers: out, x.
type Resize = kdesc.Resize

// maxResizeTaps bounds the tap tables a Resize kernel carries as
// program-scope constants (4 bytes an index, 4 a weight, 64 KiB in all),
// which are written into the kernel's source: a resize past it (about a
// 2048×2048 bilinear output) is an error naming the count rather than a
// megabyte of MSL.
const maxResizeTaps = 8192

// EmitResize writes one thread per output element reading the plan-time
// tap tables of kdesc.ResizeTaps, emitted as program-scope constant
// arrays (Metal has no double to redo the float64 coordinate maths
// exactly): the output is the sum over every combination of one tap per
// resized axis of the weights' product times the sample, every tap read
// (a zero weight beside an infinity gives NaN, as the CPU), or the
// extrapolation value where a coordinate falls outside the input. Axes
// that copy through read their own sample. Weights and the sum are float.
func EmitResize(r *Resize) (*Kernel, error) {
	if !isFloat(r.DType) || len(r.Axes) != len(r.In) || len(r.Out) != len(r.In) {
		return nil, fmt.Errorf("msl: %s: resize of %v, input %v, output %v", r.Name, r.DType, r.In, r.Out)
	}
	n := product(r.Out)
	if err := checkCount(r.Name, max(n, product(r.In))); err != nil {
		return nil, err
	}
	taps := 0
	for _, a := range r.Axes {
		if !a.Identity {
			taps += len(a.Idx)
		}
	}
	if taps > maxResizeTaps {
		return nil, fmt.Errorf("msl: %s: %d resize taps exceed the %d a kernel's constant tables hold", r.Name, taps, maxResizeTaps)
	}
	t, _ := Storage(r.DType)
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}}
	var b strings.Builder
	for ax, a := range r.Axes {
		if a.Identity {
			continue
		}
		idx, w := make([]string, len(a.Idx)), make([]string, len(a.W))
		for i := range a.Idx {
			idx[i], w[i] = strconv.Itoa(int(a.Idx[i])), flit(float32(a.W[i]))
			if i%a.Taps == 0 && a.Outside != nil && a.Outside[i/a.Taps] {
				idx[i] = "-1" // the output is the extrapolation value
			}
		}
		fmt.Fprintf(&b, "constant int %s_i%d[%d] = {%s};\n", r.Name, ax, len(idx), strings.Join(idx, ", "))
		fmt.Fprintf(&b, "constant float %s_w%d[%d] = {%s};\n", r.Name, ax, len(w), strings.Join(w, ", "))
	}
	b.WriteString(sig(r.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n    int r = int(gid);\n", n)
	for ax := len(r.Out) - 1; ax > 0; ax-- {
		fmt.Fprintf(&b, "    int o%d = r %% %d; r /= %d;\n", ax, r.Out[ax], r.Out[ax])
	}
	b.WriteString("    int o0 = r;\n")
	// Copy-through axes address their own sample; the rest loop over taps.
	stride, base := 1, []string{"0"}
	strides := make([]int, len(r.In))
	for ax := len(r.In) - 1; ax >= 0; ax-- {
		strides[ax] = stride
		if r.Axes[ax].Identity {
			base = append(base, fmt.Sprintf("o%d * %d", ax, stride))
		}
		stride *= r.In[ax]
	}
	for ax, a := range r.Axes {
		if !a.Identity && a.Outside != nil {
			fmt.Fprintf(&b, "    if (%s_i%d[o%d * %d] < 0) { out[gid] = %s; return; }\n", r.Name, ax, ax, a.Taps, store(r.DType, flit(float32(r.Spec.Extrapolation))))
		}
	}
	fmt.Fprintf(&b, "    float acc = 0.0f;\n    int off_ = %s;\n    float w_ = 1.0f;\n", strings.Join(base, " + "))
	off, w, depth := "off_", "w_", 1
	for ax, a := range r.Axes {
		if a.Identity {
			continue
		}
		ind := strings.Repeat("    ", depth)
		fmt.Fprintf(&b, "%sfor (int k%d = o%d * %d; k%d < o%d * %d + %d; k%d++) {\n", ind, ax, ax, a.Taps, ax, ax, a.Taps, a.Taps, ax)
		fmt.Fprintf(&b, "%s    int off%d = %s + %s_i%d[k%d] * %d;\n", ind, ax, off, r.Name, ax, ax, strides[ax])
		fmt.Fprintf(&b, "%s    float w%d = %s * %s_w%d[k%d];\n", ind, ax, w, r.Name, ax, ax)
		off, w = fmt.Sprintf("off%d", ax), fmt.Sprintf("w%d", ax)
		depth++
	}
	fmt.Fprintf(&b, "%sacc += %s * %s;\n", strings.Repeat("    ", depth), w, load(r.DType, "x["+off+"]"))
	for depth--; depth > 0; depth-- {
		fmt.Fprintf(&b, "%s}\n", strings.Repeat("    ", depth))
	}
	fmt.Fprintf(&b, "    out[gid] = %s;\n}\n", store(r.DType, "acc"))
	g, th := linear(n)
	return &Kernel{Name: r.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "resize"}, nil
}
