package ptxemu

import (
	"fmt"

	"github.com/kilnml/kiln/ptx"
)

// space is a PTX state space.
type space uint8

const (
	spGeneric space = iota
	spGlobal
	spShared
	spLocal
	spParam
)

func (s space) String() string {
	return [...]string{"generic", "global", "shared", "local", "param"}[s]
}

// Address windows of generic addressing: global allocations live below
// sharedWindow; cvta maps shared and local offsets into these ranges.
const (
	globalBase   = 0x0000_0001_0000_0000
	sharedWindow = 0x0000_7000_0000_0000
	localWindow  = 0x0000_7800_0000_0000
	windowSize   = 1 << 32
)

// symbol is a named address: a parameter, a shared or a local array.
type symbol struct {
	name  string
	space space
	off   uint64 // within its space
	size  int    // bytes (0 for an extern dynamic shared array)
	align int
}

// regInfo describes a declared register.
type regInfo struct {
	name string
	bits int // 1 for a predicate
	pred bool
}

// kernel is one decoded entry.
type kernel struct {
	name     string
	entry    *ptx.Entry
	paramOff []int
	params   map[string]*symbol
	regs     []regInfo
	regIdx   map[string]int32
	regMask  []uint64
	syms     map[string]*symbol
	shared   int     // static shared bytes
	dynamic  *symbol // the extern .shared array, if declared
	local    int     // local bytes per thread
	labels   map[string]int
	prog     []inst
}

// Kernel describes a loaded entry: its name, signature and the static
// shared and local memory it declares.
type Kernel struct {
	Name   string
	Params []ptx.Param
	// Shared is the static shared memory per block, Local the local
	// memory per thread, in bytes.
	Shared, Local int
	// Instructions is the number of instructions in the body.
	Instructions int
}

func (k *kernel) info() Kernel {
	return Kernel{Name: k.name, Params: k.entry.Params, Shared: k.shared, Local: k.local, Instructions: len(k.prog)}
}

// Module is a loaded PTX module.
type Module struct {
	info    *ptx.ModuleInfo
	kernels map[string]*kernel
	order   []string
}

// Load parses a PTX module and decodes every entry. Instructions outside
// the supported subset are errors naming the instruction and its line.
func Load(src string) (*Module, error) {
	info, err := ptx.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	if info.AddressSize != 0 && info.AddressSize != 64 {
		return nil, fmt.Errorf("emu: .address_size %d (64 only)", info.AddressSize)
	}
	raws, err := splitModule(src)
	if err != nil {
		return nil, err
	}
	m := &Module{info: info, kernels: map[string]*kernel{}}
	for _, r := range raws {
		e, err := info.Entry(r.name)
		if err != nil {
			return nil, fmt.Errorf("emu: %w", err)
		}
		k, err := decodeKernel(r, e)
		if err != nil {
			return nil, err
		}
		if _, dup := m.kernels[k.name]; dup {
			return nil, fmt.Errorf("emu: line %d: entry %s defined twice", r.line, k.name)
		}
		m.kernels[k.name] = k
		m.order = append(m.order, k.name)
	}
	return m, nil
}

// Kernels lists the module's entries in source order.
func (m *Module) Kernels() []Kernel {
	out := make([]Kernel, len(m.order))
	for i, n := range m.order {
		out[i] = m.kernels[n].info()
	}
	return out
}

// Kernel returns a loaded entry by name.
func (m *Module) Kernel(name string) (Kernel, error) {
	k, err := m.kernel(name)
	if err != nil {
		return Kernel{}, err
	}
	return k.info(), nil
}

func (m *Module) kernel(name string) (*kernel, error) {
	k, ok := m.kernels[name]
	if !ok {
		return nil, fmt.Errorf("emu: no entry %q in the module (entries: %v)", name, m.order)
	}
	return k, nil
}
