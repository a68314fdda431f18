//go:build amd64 && !purego

package asm

//go:noescape
func gemmExpNoPf(k int, a, b, c *float32, ldc int, flags uint)

//go:noescape
func gemmExpPfB(k int, a, b, c *float32, ldc int, flags uint)

//go:noescape
func gemmExpPack64(k int, src *float32, ld int, dst *float32, pstride int)
