package fuse

import (
	"slices"
	"testing"
)

// TestParseOptionsUnknown: entries KILN_FUSE cannot use (a misspelt pass,
// a missing '-', a stray word) are collected for FromEnv's warning, and
// disable nothing; known ones still work beside them.
func TestParseOptionsUnknown(t *testing.T) {
	o := ParseOptions("-epilogue, -epilgue, dce, of, ,-")
	if !o.Disabled["epilogue"] || len(o.Disabled) != 1 || o.Off {
		t.Errorf("disabled %v, off %v", o.Disabled, o.Off)
	}
	if want := []string{"-epilgue", "dce", "of", "-"}; !slices.Equal(o.Unknown, want) {
		t.Errorf("unknown %q, want %q", o.Unknown, want)
	}
	if o := ParseOptions(""); o.Off || len(o.Disabled) != 0 || len(o.Unknown) != 0 {
		t.Errorf("empty: %+v", o)
	}
}
