package fuse

import "testing"

// TestOptionsForDevice: a GPU session's options also disable the CPU-only
// passes, without touching the caller's map; the CPU's are as given.
func TestOptionsForDevice(t *testing.T) {
	o := ParseOptions("-cse")
	cpu := o.ForDevice("cpu")
	if !cpu.Disabled["cse"] || cpu.Disabled["qdq"] {
		t.Fatalf("cpu: disabled %v, want cse only", cpu.Disabled)
	}
	for _, kind := range []string{"cuda", "metal"} {
		gpu := o.ForDevice(kind)
		if !gpu.Disabled["cse"] || !gpu.Disabled["qdq"] || len(gpu.Disabled) != 2 {
			t.Fatalf("%s: disabled %v, want cse and qdq", kind, gpu.Disabled)
		}
	}
	if o.Disabled["qdq"] {
		t.Fatal("ForDevice changed the caller's map")
	}
	for _, name := range CPUOnly {
		if !passNamed(name) {
			t.Errorf("CPUOnly names %q, which is no pass", name)
		}
	}
}
