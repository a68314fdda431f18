package cpuid

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	features "github.com/klauspost/cpuid/v2"
)

// Variant is a family of kernels.
type Variant string

// The variants, best first on each architecture.
const (
	AVX512  Variant = "avx512" // amd64: AVX-512F/BW/DQ/VL + FMA
	AVX2    Variant = "avx2"   // amd64: AVX2 + FMA
	NEON    Variant = "neon"   // arm64 baseline
	Generic Variant = "generic"
)

// Info is what the CPU offers and what kiln chose.
type Info struct {
	Model     string
	Cores     int // physical cores as cpuid reports them
	Threads   int // logical CPUs
	Features  []string
	Supported []Variant // variants this CPU and build could run, best first
	Chosen    Variant   // after KILN_CPU
	Forced    string    // KILN_CPU as set, "" if not
}

var (
	info     Info
	infoOnce sync.Once
)

// Detect returns the CPU information, computed once.
func Detect() Info {
	infoOnce.Do(func() { info = detect(os.Getenv("KILN_CPU")) })
	return info
}

// Chosen is the variant kernels should dispatch to.
func Chosen() Variant { return Detect().Chosen }

func detect(force string) Info {
	c := features.CPU
	in := Info{Model: c.BrandName, Cores: c.PhysicalCores, Threads: runtime.NumCPU(), Forced: force}
	in.Features = c.FeatureSet()
	if buildHasAsm {
		switch runtime.GOARCH {
		case "amd64":
			if c.Supports(features.AVX512F, features.AVX512BW, features.AVX512DQ, features.AVX512VL, features.FMA3) {
				in.Supported = append(in.Supported, AVX512)
			}
			if c.Supports(features.AVX2, features.FMA3) {
				in.Supported = append(in.Supported, AVX2)
			}
		case "arm64":
			in.Supported = append(in.Supported, NEON)
		}
	}
	in.Supported = append(in.Supported, Generic)
	in.Chosen = in.Supported[0]
	if force != "" {
		if v := Variant(force); slices.Contains(in.Supported, v) {
			in.Chosen = v
		} else {
			fmt.Fprintf(os.Stderr, "kiln: KILN_CPU=%s is not available here (have %v); using %s\n", force, in.Supported, in.Chosen)
		}
	}
	return in
}

// Allows reports whether kernels of variant v may run: the CPU supports
// it and KILN_CPU did not force a lower one.
func Allows(v Variant) bool {
	in := Detect()
	ci, vi := slices.Index(in.Supported, in.Chosen), slices.Index(in.Supported, v)
	return vi >= 0 && vi >= ci
}

// HasBF16 reports whether bf16 dot-product kernels may run: the CPU has
// AVX512_BF16 (VDPBF16PS, VCVTNE2PS2BF16) on top of the avx512 variant,
// the build has assembly, and KILN_CPU allows avx512.
func HasBF16() bool {
	bf16Once.Do(func() {
		hasBF16 = buildHasAsm && runtime.GOARCH == "amd64" && features.CPU.Supports(features.AVX512BF16)
	})
	return hasBF16 && Allows(AVX512)
}

var (
	hasBF16  bool
	bf16Once sync.Once
)

// The integer dot-product instructions the int8 GEMM's variants need on
// top of their variant's baseline. Each reports only what the CPU and the
// build offer; KILN_CPU acts through the variant (avx512, avx2, neon)
// the kernels are registered under.
var (
	hasI8     [3]bool
	hasI8Once sync.Once
)

// HasAVX512VNNI reports AVX512_VNNI (VPDPBUSD on zmm registers): the
// avx512 variant of the int8 GEMM.
func HasAVX512VNNI() bool { return i8Feature(0) }

// HasAVXVNNI reports AVX-VNNI (VEX-encoded VPDPBUSD on ymm registers),
// which some CPUs have without AVX-512 (Alder Lake and later) and Zen 5
// has beside it.
func HasAVXVNNI() bool { return i8Feature(1) }

// HasDotProd reports the Armv8.2 dot-product instructions (SDOT, UDOT;
// FEAT_DotProd, "asimddp" in /proc/cpuinfo): the neon variant of the
// int8 GEMM. Cores before Cortex-A55/A75 (the Raspberry Pi 4's A72)
// lack them.
func HasDotProd() bool { return i8Feature(2) }

func i8Feature(i int) bool {
	hasI8Once.Do(func() {
		if !buildHasAsm {
			return
		}
		c := features.CPU
		switch runtime.GOARCH {
		case "amd64":
			hasI8[0] = c.Supports(features.AVX512F, features.AVX512BW, features.AVX512VL, features.AVX512VNNI)
			hasI8[1] = c.Supports(features.AVX2, features.AVXVNNI)
		case "arm64":
			hasI8[2] = c.Supports(features.ASIMDDP)
		}
	})
	return hasI8[i]
}
