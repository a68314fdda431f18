// Runs a model once with ONNX Runtime on SETDIR's in_<input>.npy files and
// writes each float32 output to OUTDIR/out_<name>.npy (the layout of the
// test models: onnx/testdata/quantize_dynamic.py uses it for its references).
//
//   node ort_run.js MODEL.onnx SETDIR OUTDIR
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { readNpy } = require('./npy.js');

function writeNpy(file, t) {
  if (t.type !== 'float32') throw new Error(`${file}: output type ${t.type} not written`);
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${t.dims.join(', ')}${t.dims.length === 1 ? ',' : ''}), }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const h = Buffer.alloc(10);
  h.write('\x93NUMPY', 0, 'latin1');
  h[6] = 1; h[7] = 0; h.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([h, Buffer.from(header, 'latin1'), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]));
}

async function main() {
  const [model, setDir, outDir] = process.argv.slice(2);
  if (!outDir) throw new Error('usage: node ort_run.js MODEL SETDIR OUTDIR');
  const sess = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all', intraOpNumThreads: 1 });
  const feeds = {};
  for (const name of sess.inputNames) feeds[name] = readNpy(path.join(setDir, `in_${name}.npy`));
  const outs = await sess.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, t] of Object.entries(outs)) writeNpy(path.join(outDir, `out_${name}.npy`), t);
}

main().catch((e) => { console.error(e); process.exit(1); });
