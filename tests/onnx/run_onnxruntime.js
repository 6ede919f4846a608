// Runs a model.onnx in onnxruntime: Microsoft's ONNX runtime, as npm's onnxruntime-node ships it
// (tests/onnx/package.json, installed by scripts/install-deps.sh), which shares no code with kiln.
// check_onnx.py calls it with one input tensor and reads back every output of the graph.
//
//   node run_onnxruntime.js MODEL.onnx REQUEST.json
//
// REQUEST.json: {"input": NAME, "type": "float32" | "int64" | ..., "dims": [...], "data": [...]},
// the data flat in row-major order. Prints {"version": V, "outputs": {NAME: {"dims", "data"}}};
// on an error, {"error": MESSAGE} and exit status 1.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

// The typed array onnxruntime takes for each element type check_onnx.py sends.
const ARRAYS = {
  float32: (data) => Float32Array.from(data),
  float64: (data) => Float64Array.from(data),
  int32: (data) => Int32Array.from(data),
  int64: (data) => BigInt64Array.from(data, (value) => BigInt(value)),
  uint8: (data) => Uint8Array.from(data),
  bool: (data) => Uint8Array.from(data, (value) => (value ? 1 : 0)),
};

async function run(modelPath, requestPath) {
  const request = JSON.parse(fs.readFileSync(requestPath, 'utf8'));
  const toArray = ARRAYS[request.type];
  if (!toArray) throw new Error(`no onnxruntime tensor for element type ${request.type}`);
  // One thread and every graph optimisation: the answer must not depend on either.
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const input = new ort.Tensor(request.type, toArray(request.data), request.dims);
  const results = await session.run({[request.input]: input});
  const outputs = {};
  for (const name of session.outputNames) {
    const tensor = results[name];
    // int64 comes back as BigInt, which JSON cannot write: class ids fit a Number.
    outputs[name] = {dims: tensor.dims, data: Array.from(tensor.data, Number)};
  }
  return {version: ort.env.versions.node || ort.env.versions.common, outputs};
}

run(process.argv[2], process.argv[3]).then(
  (answer) => process.stdout.write(JSON.stringify(answer) + '\n'),
  (error) => {
    process.stdout.write(JSON.stringify({error: String(error.message || error)}) + '\n');
    process.exit(1);
  });
