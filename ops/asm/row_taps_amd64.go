//go:build amd64 && !purego

package asm

// lerpTapsPermAVX512 is the lerpTaps primitive on zmm: per block of 16
// outputs, 32 sources loaded under masks and each output's two taps
// picked by VPERMI2PS (Taps.window lays the blocks out).
//
//go:noescape
func lerpTapsPermAVX512(y, x *float32, base *int32, mask *uint32, r0, r1 *int32, w0, w1 *float32, blocks int)
