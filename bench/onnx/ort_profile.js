// ONNX Runtime side of steps.sh: runs one model with ORT's profiler on
// and writes the profile (a Chrome trace of every node's kernel time per
// run) to PREFIX_<date>.json.
//
//   node ort_profile.js MODEL.onnx SETDIR THREADS RUNS PREFIX
//
// The session is ort_bench.js's: graph optimisation 'all', sequential
// execution, THREADS intra-op threads, one inter-op thread.
'use strict';
const path = require('path');
const ort = require('onnxruntime-node');

const { readNpy } = require('./npy.js');

async function main() {
  const [model, setDir, threads, runs, prefix] = process.argv.slice(2);
  if (!prefix) throw new Error('usage: node ort_profile.js MODEL SETDIR THREADS RUNS PREFIX');
  const sess = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    enableProfiling: true,
    profileFilePrefix: prefix,
  });
  const feeds = {};
  for (const name of sess.inputNames) feeds[name] = readNpy(path.join(setDir, `in_${name}.npy`));
  for (let i = 0; i < Number(runs); i++) await sess.run(feeds);
  sess.endProfiling();
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
