// ONNX Runtime side of compare.sh: times one model on one input set.
//
//   node ort_bench.js MODEL.onnx SETDIR THREADS RUNS WARMUP [PROFILE]
//
// SETDIR holds in_<input>.npy files. The session uses graph optimisation
// level 'all', sequential execution, THREADS intra-op threads and one
// inter-op thread. Prints one JSON object with the latencies in ms and
// the process's CPU time per timed run (cpu_ms). With PROFILE, ORT's
// profiler records every run's node times into PROFILE_<date>.json
// (steps.sh; the profiler's cost makes those runs' latencies no
// benchmark).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const { readNpy } = require('./npy.js');

async function main() {
  const [model, setDir, threads, runs, warmup, profile] = process.argv.slice(2);
  if (!warmup) throw new Error('usage: node ort_bench.js MODEL SETDIR THREADS RUNS WARMUP [PROFILE]');
  const sess = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    ...(profile ? { enableProfiling: true, profileFilePrefix: profile } : {}),
  });
  const feeds = {};
  for (const name of sess.inputNames) feeds[name] = readNpy(path.join(setDir, `in_${name}.npy`));
  for (let i = 0; i < Number(warmup); i++) await sess.run(feeds);
  const times = [];
  const cpu0 = process.cpuUsage(); // every thread of the process: ORT's pool and node's own
  for (let i = 0; i < Number(runs); i++) {
    const t = process.hrtime.bigint();
    await sess.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  if (profile) sess.endProfiling();
  times.sort((a, b) => a - b);
  const n = times.length;
  const median = n % 2 ? times[(n - 1) / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  console.log(JSON.stringify({
    median_ms: median, p90_ms: times[Math.ceil(0.9 * n) - 1], min_ms: times[0], runs: n,
    cpu_ms: (cpu.user + cpu.system) / 1000 / n,
    version: require('onnxruntime-node/package.json').version,
  }));
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
