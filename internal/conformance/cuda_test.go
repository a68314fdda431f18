package conformance

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/kilnml/kiln/driver/cuda"
)

// The cuda column runs the CUDA lowering of every case (cuda.Lower, the
// same module and steps the ptx-emu column runs on the emulator) on
// cuda:0, a real NVIDIA GPU, over device copies of the same regions
// (0xAB wherever nothing was written), so an unwritten output element or a
// kernel that differs on hardware from the emulator shows. Its gaps are
// ptx-emu's: both columns run one lowering.

// cudaAvailable reports why the cuda column cannot run here, or nil.
func cudaAvailable() error {
	n, err := cuda.Count()
	switch {
	case err != nil:
		return err
	case n == 0:
		return errors.New("the driver sees no GPU")
	}
	return nil
}

// cudaRequired reports whether a missing GPU fails the matrix
// (KILN_TEST_REQUIRE_GPU=1, as for driver/cuda's GPU tests).
func cudaRequired() bool { return os.Getenv("KILN_TEST_REQUIRE_GPU") == "1" }

// runCUDA lowers each case for CUDA and runs its steps on cuda:0.
func runCUDA(t *testing.T, ps []*prepared) [][]result {
	dev, err := cuda.Open(0)
	if err != nil {
		t.Fatalf("opening cuda:0: %v", err)
	}
	t.Logf("cuda: %v", dev)
	stream, err := dev.NewStream()
	if err != nil {
		t.Fatalf("creating a stream: %v", err)
	}
	defer stream.Destroy()
	return runLowered(ps, func(module string, steps []cuda.Step, regions [][]byte) error {
		return runDeviceSteps(dev, stream, module, steps, regions)
	})
}

// runDeviceSteps runs a lowered CUDA program over device copies of
// regions and copies the regions back. Copy steps go through the host
// (the test needs their effect, not their speed).
func runDeviceSteps(dev *cuda.Device, s *cuda.Stream, module string, steps []cuda.Step, regions [][]byte) (err error) {
	bufs := make([]*cuda.Buffer, len(regions))
	defer func() {
		for _, b := range bufs {
			if b != nil {
				err = errors.Join(err, b.Free())
			}
		}
	}()
	for r, b := range regions {
		if bufs[r], err = dev.Alloc(len(b)); err != nil {
			return err
		}
		if err = s.Upload(bufs[r], 0, b); err != nil {
			return err
		}
	}
	modules := map[string]*cuda.Module{}
	defer func() {
		for _, m := range modules {
			err = errors.Join(err, m.Unload())
		}
	}()
	for i, st := range steps {
		if st.Kernel == nil {
			tmp := make([]byte, st.Bytes)
			if err := s.Download(bufs[st.CopyFrom.Region], st.CopyFrom.Offset, tmp); err != nil {
				return fmt.Errorf("step %d (%s), copy: %w", i, st.Node, err)
			}
			if err := s.Upload(bufs[st.CopyTo.Region], st.CopyTo.Offset, tmp); err != nil {
				return fmt.Errorf("step %d (%s), copy: %w", i, st.Node, err)
			}
			continue
		}
		src := module
		if st.Module != "" {
			src = st.Module // a custom op's own module
		}
		m, ok := modules[src]
		if !ok {
			if m, err = dev.LoadPTX(src); err != nil {
				return fmt.Errorf("loading step %d's module: %w", i, err)
			}
			modules[src] = m
		}
		k, err := m.Kernel(st.Kernel.Name)
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i, st.Node, err)
		}
		args := make([]any, 0, len(st.Args)+len(st.Scalars))
		for _, a := range st.Args {
			args = append(args, uintptr(bufs[a.Region].Ptr)+uintptr(a.Offset))
		}
		args = append(args, st.Scalars...)
		if err := k.Launch(s, st.Kernel.Launch, args...); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, st.Node, err)
		}
		// Wait after each step, so a fault names its step.
		if err := s.Synchronize(); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, st.Node, err)
		}
	}
	for r, b := range regions {
		if err := s.Download(bufs[r], 0, b); err != nil {
			return err
		}
	}
	return nil
}
