package cuda

import "github.com/kilnml/kiln/exec"

// TimeDeviceCopy is the GPU milliseconds of reps device-to-device copies
// of n bytes on one stream, the bandwidth ceiling elementwise kernels are
// measured against (BenchmarkGPUCopy).
func TimeDeviceCopy(d *Device, n, reps int) (float32, error) {
	src, err := d.Alloc(n)
	if err != nil {
		return 0, err
	}
	defer src.Free()
	dst, err := d.Alloc(n)
	if err != nil {
		return 0, err
	}
	defer dst.Free()
	s, err := d.NewStream()
	if err != nil {
		return 0, err
	}
	defer s.Destroy()
	start, err := d.NewEvent()
	if err != nil {
		return 0, err
	}
	defer start.Destroy()
	end, err := d.NewEvent()
	if err != nil {
		return 0, err
	}
	defer end.Destroy()
	if err := start.Record(s); err != nil {
		return 0, err
	}
	err = d.do(func() error {
		for range reps {
			if err := d.l.check("cuMemcpyDtoDAsync", call(d.l.cuMemcpyDtoDAsync, uintptr(dst.Ptr), uintptr(src.Ptr), uintptr(n), s.h)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := end.Record(s); err != nil {
		return 0, err
	}
	return end.Since(start)
}

// HandleCopies is how many device-to-device copies every run of x
// queues for its device-resident handles, before and after its steps.
func HandleCopies(x exec.Executable) (pre, post int) {
	pr, ok := x.(*program)
	if !ok {
		return 0, 0
	}
	return len(pr.pre), len(pr.post)
}

// MoEDeviceBytes is the device memory x holds for its MoE layers' expert
// weights (compact copies of split layers, full ones of whole layers).
func MoEDeviceBytes(x exec.Executable) int {
	pr, ok := x.(*program)
	if !ok {
		return 0
	}
	return pr.moeDeviceBytes()
}
