package cuda

import (
	"fmt"
	"strings"
)

// Describe summarises the CUDA driver for `kiln info`: its version, the
// library it came from and every device, or why there are none.
func Describe() string {
	v, err := DriverVersion()
	if err != nil {
		return "unavailable: " + err.Error()
	}
	n, err := Count()
	if err != nil {
		return fmt.Sprintf("driver %d.%d (%s), devices unknown: %v", v/1000, v%1000/10, loaded.path, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "driver %d.%d (%s), %d device(s)", v/1000, v%1000/10, loaded.path, n)
	for i := range n {
		d, err := Open(i)
		if err != nil {
			fmt.Fprintf(&b, "\n  cuda:%d: %v", i, err)
			continue
		}
		fmt.Fprintf(&b, "\n  %s", d)
	}
	return b.String()
}
