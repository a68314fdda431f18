"""PyTorch side of driver/cuda/gpu-check.sh: eager PyTorch on the GPU on the
ONNX benchmark models (bench/onnx/models, rebuilt from the same seeds by
onnx/testdata/export_models.py), timed as `kiln bench` times a run: host
inputs in, forward, host outputs out (median of 100 after 10 warm-ups;
also the forward alone by CUDA events). TF32 is off, as in kiln's F32.
When OUTDIR (argument 1) holds kiln's GPU outputs from `kiln run --device
cuda --output OUTDIR/<model>-<set>`, it also prints their largest
difference from the torch CPU outputs saved with the inputs, relative to
1 + |reference|. One JSON object per model and input set."""
import json, os, sys, time
import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "onnx", "testdata"))
import export_models

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "onnx", "models")
kiln_out = sys.argv[1] if len(sys.argv) > 1 else ""
for name, sets in [("bert", ["b1", "b8"]), ("cnn", ["b1"])]:
    model, _, in_names, out_names = export_models.bench_models(only=name)[name]
    model = model.cuda().eval()
    for s in sets:
        d = os.path.join(root, name, s)
        if not os.path.isdir(d):
            continue
        host = [torch.from_numpy(np.load(os.path.join(d, f"in_{n}.npy"))) for n in in_names]
        def run():
            outs = model(*[h.cuda() for h in host])
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            return [o.cpu() for o in outs]
        with torch.inference_mode():
            for _ in range(10):
                run()
            times = []
            for _ in range(100):
                torch.cuda.synchronize(); t = time.perf_counter(); run(); times.append((time.perf_counter() - t) * 1e3)
            dev = [h.cuda() for h in host]
            torch.cuda.synchronize()
            st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            st.record()
            for _ in range(100):
                model(*dev)
            en.record(); torch.cuda.synchronize()
        times.sort()
        res = {"model": name, "set": s, "torch_e2e_median_ms": times[50], "torch_e2e_min_ms": times[0],
               "torch_fwd_gpu_ms": st.elapsed_time(en) / 100, "torch": torch.__version__}
        kd = os.path.join(kiln_out, f"{name}-{s}")
        for o in out_names:
            kp = os.path.join(kd, o + ".npy")
            if kiln_out and os.path.exists(kp):
                k, ref = np.load(kp).astype(np.float64), np.load(os.path.join(d, f"out_{o}.npy")).astype(np.float64)
                res["kiln_vs_torchcpu_" + o] = float(np.max(np.abs(k - ref) / (1 + np.abs(ref))))
            elif kiln_out:
                res["kiln_vs_torchcpu_" + o] = "missing"
        print(json.dumps(res), flush=True)
