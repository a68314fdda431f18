module github.com/kilnml/kiln

go 1.26

require github.com/klauspost/cpuid/v2 v2.4.2

require (
	github.com/ebitengine/purego v0.11.3
	golang.org/x/sys v0.41.0
	google.golang.org/protobuf v1.36.12
)

require github.com/google/go-cmp v0.7.0
