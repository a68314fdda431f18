package kiln

import "fmt"

// Device names where a compiled graph runs.
type Device struct {
	Kind  string // "cpu", "cuda", "metal"
	Index int    // device ordinal for kinds with several devices
}

// CPU runs on this machine's cores with kiln's CPU kernels.
var CPU = Device{Kind: "cpu"}

// CUDA is NVIDIA GPU number i; it needs
// import _ "github.com/kilnml/kiln/driver/cuda".
func CUDA(i int) Device { return Device{Kind: "cuda", Index: i} }

// Metal is the system's default Apple GPU; it needs
// import _ "github.com/kilnml/kiln/driver/metal".
func Metal() Device { return Device{Kind: "metal"} }

func (d Device) String() string {
	if d.Kind == "cpu" || d.Kind == "metal" {
		return d.Kind
	}
	return fmt.Sprintf("%s:%d", d.Kind, d.Index)
}
