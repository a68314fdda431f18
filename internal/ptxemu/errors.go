package ptxemu

import "fmt"

// Error is a fault raised while running a kernel: where (kernel, line,
// instruction, block and thread) and what.
type Error struct {
	Kernel string
	Line   int
	Instr  string
	// Block and Thread are %ctaid and %tid of the faulting thread;
	// Thread is (-1, -1, -1) for a fault of the block as a whole (a
	// deadlock, a barrier that cannot complete).
	Block, Thread [3]int
	Msg           string
}

func (e *Error) Error() string {
	where := fmt.Sprintf("block (%d,%d,%d)", e.Block[0], e.Block[1], e.Block[2])
	if e.Thread[0] >= 0 {
		where += fmt.Sprintf(" thread (%d,%d,%d)", e.Thread[0], e.Thread[1], e.Thread[2])
	}
	at := ""
	if e.Line > 0 {
		at = fmt.Sprintf(" line %d `%s`", e.Line, e.Instr)
	}
	return fmt.Sprintf("emu: %s%s: %s: %s", e.Kernel, at, where, e.Msg)
}

// fault is the panic value an instruction raises; the run loop recovers
// it and adds where it happened.
type fault struct{ msg string }

func (t *thread) fail(format string, a ...any) {
	panic(&fault{msg: fmt.Sprintf(format, a...)})
}

func coords(lin int, dims [3]int) [3]int {
	return [3]int{lin % dims[0], lin / dims[0] % dims[1], lin / (dims[0] * dims[1])}
}

// threadName formats a thread of the block by its linear index.
func (b *block) threadName(lin int) string {
	c := coords(lin, b.l.geo.Block)
	return fmt.Sprintf("(%d,%d,%d)", c[0], c[1], c[2])
}

// errorAt builds the Error of a fault at thread t's current instruction.
func (b *block) errorAt(t *thread, in *inst, msg string) *Error {
	e := &Error{Kernel: b.l.k.name, Block: b.ctaidInts(), Thread: [3]int{-1, -1, -1}, Msg: msg}
	if in != nil {
		e.Line, e.Instr = in.line, in.text
	}
	if t != nil {
		e.Thread = coords(t.lin, b.l.geo.Block)
	}
	return e
}

func (b *block) ctaidInts() [3]int {
	return [3]int{int(b.ctaid[0]), int(b.ctaid[1]), int(b.ctaid[2])}
}
