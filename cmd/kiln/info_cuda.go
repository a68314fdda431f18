//go:build !nocuda

package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kilnml/kiln/driver/cuda"
)

// Importing driver/cuda registers the cuda device kind; `kiln info` then
// also reports the driver and its GPUs, or why there are none, and the
// cuBLAS library plain GEMMs use, or why they run kiln's PTX GEMM. Build
// with -tags nocuda for a kiln binary without the driver (no purego, so
// it links statically with CGO_ENABLED=0).
func init() {
	info := commands["info"]
	commands["info"] = func(args []string) error {
		if err := info(args); err != nil {
			return err
		}
		writeCUDAInfo(os.Stdout)
		return nil
	}
}

// writeCUDAInfo writes the CUDA section of `kiln info`.
func writeCUDAInfo(w io.Writer) {
	fmt.Fprintf(w, "cuda: %s\n", cuda.Describe())
	if path, err := cuda.CublasLibrary(); err != nil {
		fmt.Fprintf(w, "cublas: not used: %v\n", err)
	} else {
		fmt.Fprintf(w, "cublas: %s\n", path)
	}
}
