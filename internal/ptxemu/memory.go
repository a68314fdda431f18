package ptxemu

import (
	"fmt"
	"sort"
	"sync"
)

// Memory is emulated device (global) memory: allocations at 64-bit
// addresses, each followed by an unmapped gap so that running off the end
// of one faults instead of landing in the next. It is safe for concurrent
// use; allocations must not change while a launch runs on it.
type Memory struct {
	mu     sync.RWMutex
	allocs []*alloc // sorted by base
	next   uint64
	atomic sync.Mutex // serialises global atomics across parallel blocks
}

type alloc struct {
	base uint64
	size uint64
	data []byte // nil for a sparse allocation
	// A sparse allocation holds only the pages touched, zero-filled on
	// first use, so kernels with 64-bit index spaces can run over a few
	// of their blocks without gigabytes of host memory.
	mu    sync.Mutex
	pages map[uint64][]byte
}

func (a *alloc) end() uint64 { return a.base + a.size }

// pageSize is the granule of sparse allocations; aligned accesses of up
// to 16 bytes never cross it.
const pageSize = 4096

// bytes returns n bytes at offset off, which must lie within one page of
// a sparse allocation (the caller checks bounds).
func (a *alloc) bytes(off uint64, n int) ([]byte, bool) {
	if a.data != nil {
		return a.data[off : off+uint64(n)], true
	}
	p, in := off/pageSize, off%pageSize
	if in+uint64(n) > pageSize {
		return nil, false
	}
	a.mu.Lock()
	pg := a.pages[p]
	if pg == nil {
		pg = make([]byte, pageSize)
		a.pages[p] = pg
	}
	a.mu.Unlock()
	return pg[in : in+uint64(n)], true
}

// allocGap is the unmapped distance between allocations, and their
// alignment (cudaMalloc aligns to 256 bytes).
const allocGap = 256

// NewMemory returns an empty device memory.
func NewMemory() *Memory { return &Memory{next: globalBase} }

// Alloc reserves n zeroed bytes and returns their device address.
func (m *Memory) Alloc(n int) (uint64, error) {
	if n < 0 {
		return 0, fmt.Errorf("emu: Alloc(%d)", n)
	}
	return m.Map(make([]byte, n))
}

// Map makes b device memory without copying: kernels read and write b
// itself. It returns b's device address.
func (m *Memory) Map(b []byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.add(&alloc{size: uint64(len(b)), data: b})
}

// AllocSparse reserves n zeroed bytes that take host memory only where
// they are touched (in 4 KiB pages). It suits huge buffers of which a
// test runs a few blocks (Options.Blocks).
func (m *Memory) AllocSparse(n int64) (uint64, error) {
	if n < 0 || n > 1<<44 {
		return 0, fmt.Errorf("emu: AllocSparse(%d)", n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.add(&alloc{size: uint64(n), pages: map[uint64][]byte{}})
}

// add places an allocation after the last; the caller holds mu.
func (m *Memory) add(a *alloc) (uint64, error) {
	a.base = m.next
	end := a.base + a.size
	if end >= sharedWindow {
		return 0, fmt.Errorf("emu: device memory exhausted")
	}
	m.next = (end + 2*allocGap - 1) / allocGap * allocGap
	m.allocs = append(m.allocs, a)
	return a.base, nil
}

// Free releases the allocation starting at addr.
func (m *Memory) Free(addr uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range m.allocs {
		if a.base == addr {
			m.allocs = append(m.allocs[:i], m.allocs[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("emu: Free(%#x): not the start of an allocation", addr)
}

// Bytes returns the n bytes at addr as a slice of the allocation (reads
// and writes through it are device memory accesses). In a sparse
// allocation they must lie within one 4 KiB page.
func (m *Memory) Bytes(addr uint64, n int) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	a, err := m.find(addr, n)
	if err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	b, ok := a.bytes(addr-a.base, n)
	if !ok {
		return nil, fmt.Errorf("emu: %d bytes at %#x cross a page of a sparse allocation", n, addr)
	}
	return b, nil
}

// Write copies src to device memory at addr.
func (m *Memory) Write(addr uint64, src []byte) error {
	return m.pieces(addr, len(src), func(b []byte, off int) { copy(b, src[off:]) })
}

// Read copies device memory at addr into dst.
func (m *Memory) Read(addr uint64, dst []byte) error {
	return m.pieces(addr, len(dst), func(b []byte, off int) { copy(dst[off:], b) })
}

// pieces calls f on [addr, addr+n) in pieces (one for a dense
// allocation, page by page for a sparse one), with each piece's offset
// from addr.
func (m *Memory) pieces(addr uint64, n int, f func(b []byte, off int)) error {
	if n == 0 {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	a, err := m.find(addr, n)
	if err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	for off := 0; off < n; {
		step := n - off
		rel := addr + uint64(off) - a.base
		if a.data == nil {
			step = min(step, int(pageSize-rel%pageSize))
		}
		b, _ := a.bytes(rel, step)
		f(b, off)
		off += step
	}
	return nil
}

// find returns the allocation holding [addr, addr+n), or an error that
// places addr relative to the nearest allocation. The caller holds mu.
func (m *Memory) find(addr uint64, n int) (*alloc, error) {
	i := sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].end() > addr })
	if i < len(m.allocs) {
		a := m.allocs[i]
		if addr >= a.base && addr+uint64(n) <= a.end() {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%d bytes at %#x: %s", n, addr, m.describe(addr))
}

// describe places an address relative to the nearest allocation.
func (m *Memory) describe(addr uint64) string {
	var best *alloc
	var dist uint64
	for _, a := range m.allocs {
		var d uint64
		switch {
		case addr < a.base:
			d = a.base - addr
		case addr >= a.end():
			d = addr - a.end() + 1
		}
		if best == nil || d < dist {
			best, dist = a, d
		}
	}
	switch {
	case best == nil:
		return "no device memory is allocated"
	case addr < best.base:
		return fmt.Sprintf("%d bytes before the allocation [%#x, %#x)", best.base-addr, best.base, best.end())
	case addr >= best.end():
		return fmt.Sprintf("%d bytes past the end of the allocation [%#x, %#x)", addr-best.end(), best.base, best.end())
	}
	return fmt.Sprintf("runs past the end of the allocation [%#x, %#x)", best.base, best.end())
}
