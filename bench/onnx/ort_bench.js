// ONNX Runtime side of compare.sh: times one model on one input set.
//
//   node ort_bench.js MODEL.onnx SETDIR THREADS RUNS WARMUP
//
// SETDIR holds in_<input>.npy files. The session uses graph optimisation
// level 'all', sequential execution, THREADS intra-op threads and one
// inter-op thread. Prints one JSON object with the latencies in ms.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// readNpy reads a little-endian, C-order .npy file of float32, int64 or
// int32 values.
function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const data = b.subarray(start + hlen);
  const copy = (T) => new T(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
  switch (descr) {
    case '<f4': return new ort.Tensor('float32', copy(Float32Array), shape);
    case '<i8': return new ort.Tensor('int64', copy(BigInt64Array), shape);
    case '<i4': return new ort.Tensor('int32', copy(Int32Array), shape);
  }
  throw new Error(`${file}: dtype ${descr} not handled`);
}

async function main() {
  const [model, setDir, threads, runs, warmup] = process.argv.slice(2);
  if (!warmup) throw new Error('usage: node ort_bench.js MODEL SETDIR THREADS RUNS WARMUP');
  const sess = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
  });
  const feeds = {};
  for (const name of sess.inputNames) feeds[name] = readNpy(path.join(setDir, `in_${name}.npy`));
  for (let i = 0; i < Number(warmup); i++) await sess.run(feeds);
  const times = [];
  for (let i = 0; i < Number(runs); i++) {
    const t = process.hrtime.bigint();
    await sess.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const n = times.length;
  const median = n % 2 ? times[(n - 1) / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  console.log(JSON.stringify({
    median_ms: median, p90_ms: times[Math.ceil(0.9 * n) - 1], min_ms: times[0], runs: n,
    version: require('onnxruntime-node/package.json').version,
  }));
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
