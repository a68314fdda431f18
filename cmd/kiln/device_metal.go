//go:build darwin

package main

// On macOS, --device metal runs models on the system's Apple GPU.
import _ "github.com/kilnml/kiln/driver/metal"
