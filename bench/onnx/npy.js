// npy.js: reading .npy files into ONNX Runtime tensors, for the scripts
// beside it (ort_bench.js, ort_run.js).
'use strict';
const fs = require('fs');
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

module.exports = { readNpy };
