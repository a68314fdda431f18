package ptxemu

// execFn executes one instruction for one thread. It advances nothing:
// the run loop has already moved pc past the instruction; branches set
// it. Faults panic with a *fault, which the run loop turns into an Error.
type execFn func(t *thread, in *inst)

// rounding is a rounding modifier.
type rounding uint8

const (
	rNone rounding = iota
	rRN            // to nearest, ties to even
	rRZ            // toward zero
	rRM            // toward -Inf
	rRP            // toward +Inf
	rRNA           // to nearest, ties away from zero (cvt.rna.tf32)
)

// cmpOp is a setp comparison.
type cmpOp uint8

const (
	cEq cmpOp = iota
	cNe
	cLt
	cLe
	cGt
	cGe
	cLo
	cLs
	cHi
	cHs
	cEqu
	cNeu
	cLtu
	cLeu
	cGtu
	cGeu
	cNum
	cNan
)

var cmpNames = map[string]cmpOp{
	"eq": cEq, "ne": cNe, "lt": cLt, "le": cLe, "gt": cGt, "ge": cGe,
	"lo": cLo, "ls": cLs, "hi": cHi, "hs": cHs,
	"equ": cEqu, "neu": cNeu, "ltu": cLtu, "leu": cLeu, "gtu": cGtu, "geu": cGeu,
	"num": cNum, "nan": cNan,
}

// collective is how an instruction synchronises with other threads.
type collective uint8

const (
	collNone   collective = iota
	collBar               // bar.sync / barrier.sync: the block (or a count)
	collArrive            // bar.arrive: counts toward a barrier, no wait
	collWarp              // shfl.sync, ldmatrix, mma.sync: the warp
)

// inst is a decoded instruction.
type inst struct {
	fn       execFn
	line     int
	text     string
	guard    int32 // predicate register, -1 for none
	guardNeg bool
	t, t2    typ
	rnd      rounding
	ftz, sat bool
	nan      bool // .NaN on min/max
	approx   bool
	cmp      cmpOp
	bop      uint8 // setp's BoolOp: 0 none, 1 and, 2 or, 3 xor
	sp       space
	vec      int // vector width of ld/st (1, 2, 4)
	op       []operand
	target   int // branch target
	coll     collective
	warp     warpFn // the collective's semantics, for collWarp
	mode     int    // op-specific selector
}
