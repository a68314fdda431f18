package ptxemu

import "fmt"

// decBra: bra{.uni} label.
func decBra(d *dec) error {
	d.has("uni")
	if err := d.noTypes(); err != nil {
		return err
	}
	if err := d.nops(1); err != nil {
		return err
	}
	target, ok := d.k.labels[d.raw[0]]
	if !ok {
		return fmt.Errorf("unknown label %q", d.raw[0])
	}
	d.in.target = target
	d.in.fn = func(th *thread, in *inst) { th.pc = in.target }
	return nil
}

// decRet: ret and exit end the thread (kiln has no calls).
func decRet(d *dec) error {
	d.has("uni")
	if err := d.noTypes(); err != nil {
		return err
	}
	if err := d.nops(0); err != nil {
		return err
	}
	d.in.fn = execRet
	return nil
}

func execRet(th *thread, in *inst) {
	th.state = tExit
	th.exitLine = in.line
}

// decBar: bar.warp.sync membermask (a warp barrier); bar{.cta}.sync / barrier{.cta}.sync{.aligned} a{, b} and
// bar{.cta}.arrive / barrier.arrive a, b. a is the barrier (0-15), b the
// number of threads (a multiple of 32; all of the block when absent).
func decBar(d *dec) error {
	if d.has("warp") {
		if !d.has("sync") {
			return fmt.Errorf("bar.warp needs .sync")
		}
		o, err := d.src(0, tB32)
		if err != nil || d.nops(1) != nil {
			return fmt.Errorf("bar.warp.sync takes a membermask")
		}
		d.in.op = []operand{o}
		d.in.coll, d.in.warp = collWarp, warpSyncResolve
		return nil
	}
	d.ignore("cta", "aligned")
	switch {
	case d.has("sync"):
		d.in.coll = collBar
	case d.has("arrive"):
		d.in.coll = collArrive
	default:
		return fmt.Errorf("only bar.sync and bar.arrive are supported")
	}
	if len(d.types) != 0 || len(d.raw) < 1 || len(d.raw) > 2 {
		return fmt.Errorf("%s takes a barrier and an optional thread count", d.base)
	}
	for i := range d.raw {
		o, err := d.src(i, tU32)
		if err != nil {
			return err
		}
		d.in.op = append(d.in.op, o)
	}
	return nil
}

// decFence: membar and fence order memory; every access is already
// visible at once here, so they do nothing.
func decFence(d *dec) error {
	d.ignore("cta", "gl", "sys", "gpu", "sc", "acq_rel")
	d.in.fn = func(*thread, *inst) {}
	if err := d.noTypes(); err != nil {
		return err
	}
	return d.nops(0)
}

// ctrlDecoders are the decoders of control-flow and synchronisation.
var ctrlDecoders = map[string]func(*dec) error{
	"bra": decBra, "ret": decRet, "exit": decRet, "bar": decBar, "barrier": decBar,
	"membar": decFence, "fence": decFence,
}
