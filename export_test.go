package kiln

// HoldForTest takes cg as one of its methods would and returns the
// release, so tests can see every entry point refuse ErrConcurrentUse
// without racing goroutines.
func HoldForTest(cg *CompiledGraph) (release func(), err error) {
	if err := cg.acquire(useGraph); err != nil {
		return nil, err
	}
	return func() { cg.release(useGraph) }, nil
}
