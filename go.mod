module github.com/kilnml/kiln

go 1.26

require github.com/klauspost/cpuid/v2 v2.4.2

require golang.org/x/sys v0.41.0 // indirect
