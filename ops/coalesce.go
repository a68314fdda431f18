package ops

// coalesceDims drops the size-1 dims of dims and merges each remaining
// dim into the one before it where every stride set is contiguous across
// the two (the outer stride is the inner one times the inner size; zero
// strides, a broadcast, merge with zero strides), so that loops over the
// result visit the same elements in the same order in fewer, longer
// runs. dims must have no 0; each of strides has one stride per dim.
func coalesceDims(dims []int, strides ...[]int) ([]int, [][]int) {
	var ds []int
	ss := make([][]int, len(strides))
	for i, n := range dims {
		if n == 1 {
			continue
		}
		if k := len(ds) - 1; k >= 0 && mergeable(ss, strides, k, i, n) {
			ds[k] *= n
			for j := range ss {
				ss[j][k] = strides[j][i]
			}
			continue
		}
		ds = append(ds, n)
		for j := range ss {
			ss[j] = append(ss[j], strides[j][i])
		}
	}
	return ds, ss
}

// mergeable reports whether merged dim k (strides ss) continues into dim
// i (size n, strides strides) in every stride set.
func mergeable(ss, strides [][]int, k, i, n int) bool {
	for j := range ss {
		if ss[j][k] != strides[j][i]*n {
			return false
		}
	}
	return true
}
