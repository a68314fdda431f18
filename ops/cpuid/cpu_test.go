package cpuid

import (
	"os"
	"runtime"
	"slices"
	"testing"
)

func TestDetectForce(t *testing.T) {
	in := detect("generic")
	if in.Chosen != Generic {
		t.Fatalf("KILN_CPU=generic chose %s", in.Chosen)
	}
	if in.Supported[len(in.Supported)-1] != Generic {
		t.Fatalf("generic must always be supported, got %v", in.Supported)
	}
	if bogus := detect("sse9"); bogus.Chosen != bogus.Supported[0] {
		t.Fatalf("unknown KILN_CPU should fall back to the best variant, chose %s", bogus.Chosen)
	}
}

// TestRequire fails CI when KILN_TEST_REQUIRE names a variant that was not
// chosen (a broken dispatch or a machine without the expected features).
func TestRequire(t *testing.T) {
	want := os.Getenv("KILN_TEST_REQUIRE")
	if want == "" {
		t.Logf("chosen %s of %v on %s (set KILN_TEST_REQUIRE to enforce)", Chosen(), Detect().Supported, runtime.GOARCH)
		return
	}
	if got := Chosen(); string(got) != want {
		t.Fatalf("KILN_TEST_REQUIRE=%s but %s was chosen (supported %v)", want, got, Detect().Supported)
	}
	if !slices.Contains(Detect().Supported, Variant(want)) {
		t.Fatalf("%s not supported", want)
	}
}
