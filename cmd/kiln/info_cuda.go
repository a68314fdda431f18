//go:build !nocuda

package main

import (
	"fmt"
	"os"

	"github.com/kilnml/kiln/driver/cuda"
)

// Importing driver/cuda registers the cuda device kind; `kiln info` then
// also reports the driver and its GPUs, or why there are none. Build with
// -tags nocuda for a kiln binary without the driver (no purego, so it
// links statically with CGO_ENABLED=0).
func init() {
	info := commands["info"]
	commands["info"] = func(args []string) error {
		if err := info(args); err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "cuda: %s\n", cuda.Describe())
		return nil
	}
}
