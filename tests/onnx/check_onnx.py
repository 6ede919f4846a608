#!/usr/bin/python3
"""Checks a model.onnx that `kiln export --format onnx` wrote, with tools kiln does not share code
with: the onnx package's checker and strict shape inference (Debian's python3-onnx), then two
runtimes run it on the examples of a JSON lines file (one instance per line, as `kiln predict
--input` takes them) and their outputs are compared with `kiln predict`'s JSON lines for the same
file:
- onnxruntime (npm's onnxruntime-node, tests/onnx/run_onnxruntime.js), which must run it;
- OpenCV's DNN module (python3-opencv, 4.6 on Debian 12), whose importer reads fewer operators:
  what it cannot read is reported as its error, not as a failed check.

    check_onnx.py MODEL.onnx [INPUT.jsonl EXPECTED.jsonl]
    check_onnx.py --random-inputs MODEL.onnx OUT.jsonl      writes 4 random instances of the
                                                           model's input shape, for kiln predict

Prints one JSON object: the checks passed, the outputs compared and, for each runtime and output,
the largest absolute difference from kiln's (class ids: how many differ), under
"max_abs_difference" (onnxruntime) and "opencv": {"max_abs_difference": ...} or {"error": ...}.
Without the two files, only the checker and shape inference run. Exits 1 when a check fails."""
import json
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np
import onnx
import onnx.numpy_helper
from onnx import shape_inference


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(model_path, input_path=None, expected_path=None):
    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    graph_input = model.graph.input[0]
    element = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[graph_input.type.tensor_type.elem_type]
    batch_dim = graph_input.type.tensor_type.shape.dim[0]
    report = {"checker": "ok", "shape_inference": "ok", "opset": model.opset_import[0].version,
              "input": graph_input.name, "dynamic_batch": batch_dim.dim_param == "batch",
              "outputs": [o.name for o in model.graph.output]}
    if input_path is None:
        print(json.dumps(report))
        return

    instances = read_lines(input_path)
    batch = np.array(instances, dtype=element)
    expected = read_lines(expected_path)
    outputs = run_onnxruntime(model_path, graph_input.name, batch)
    report["max_abs_difference"] = differences(expected, report["outputs"], outputs)
    report["onnxruntime"] = ONNXRUNTIME_VERSION[0]
    try:
        outputs = run_opencv(model_path, graph_input.name, batch, report["outputs"])
        report["opencv"] = {"version": cv2.__version__,
                            "max_abs_difference": differences(expected, report["outputs"], outputs)}
    except cv2.error as error:  # its importer's or its layers' limits, docs/onnx.md
        report["opencv"] = {"version": cv2.__version__, "error": str(error).strip()[-300:]}
    report["examples"] = len(instances)
    print(json.dumps(report))


ONNXRUNTIME_VERSION = [None]


def run_onnxruntime(model_path, input_name, batch):
    """Every output of the graph by name, as onnxruntime computes it for `batch`."""
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_onnxruntime.js")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as request:
        json.dump({"input": input_name, "type": batch.dtype.name, "dims": list(batch.shape),
                   "data": batch.reshape(-1).tolist()}, request)
        request.flush()
        ran = subprocess.run(["node", runner, model_path, request.name], capture_output=True,
                             text=True)
    answer = json.loads(ran.stdout) if ran.stdout.strip() else {"error": ran.stderr.strip()}
    if ran.returncode != 0 or "error" in answer:
        raise RuntimeError("onnxruntime: " + answer.get("error", ran.stderr.strip()))
    ONNXRUNTIME_VERSION[0] = answer["version"]
    return {name: np.array(output["data"], dtype=np.float64).reshape(output["dims"])
            for name, output in answer["outputs"].items()}


def run_opencv(model_path, input_name, batch, names):
    """The named outputs as OpenCV's DNN module computes them (in float32, as it reads)."""
    batch = batch.astype(np.float32)
    if batch.ndim == 3:
        model_path, input_name, batch = as_four_dimensional(model_path, input_name, batch)
        try:
            net = cv2.dnn.readNetFromONNX(model_path)
        finally:
            os.unlink(model_path)
    else:
        net = cv2.dnn.readNetFromONNX(model_path)
    net.setInput(batch, input_name)
    return dict(zip(names, net.forward(names)))


def as_four_dimensional(model_path, input_name, batch):
    """The model with one Reshape in front that takes the batch as [N, C, L, 1] and gives the
    graph its [N, C, L]; the batch reshaped so. OpenCV's Python binding reads a 3-D array as a
    2-D image of L channels, so a 3-D input cannot reach the graph whole; in C++ it can."""
    model = onnx.load(model_path)
    outer = input_name + "_as_4d"
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            if name == input_name:
                node.input[i] = outer + "_reshaped"
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][1:]
    model.graph.initializer.append(onnx.numpy_helper.from_array(
        np.array([0] + dims, dtype=np.int64), outer + "_shape"))
    model.graph.node.insert(0, onnx.helper.make_node(
        "Reshape", [outer, outer + "_shape"], [outer + "_reshaped"]))
    model.graph.input[0].name = outer
    model.graph.input[0].type.tensor_type.shape.dim.add().dim_value = 1
    path = tempfile.NamedTemporaryFile(suffix=".onnx", delete=False).name
    onnx.save(model, path)
    return path, outer, batch[..., np.newaxis]


def differences(expected, names, outputs):
    """For each output, the largest absolute difference from kiln's lines; class ids: how many
    differ."""
    found = {}
    for name in names:
        kiln = np.array([line[name] for line in expected], dtype=np.float64)
        ours = np.asarray(outputs[name], dtype=np.float64).reshape(kiln.shape)
        if name.split("/")[-1] in ("class_ids", "classes"):
            found[name] = int(np.sum(ours != kiln))
        else:
            found[name] = float(np.max(np.abs(ours - kiln))) if kiln.size else 0.0
    return found


def write_random_inputs(model_path, out_path, count=4):
    """Instances of the model's input shape (batch dimension left out), values in [-1, 1]."""
    model = onnx.load(model_path)
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][1:]
    values = np.random.default_rng(3).uniform(-1, 1, size=[count] + dims).round(4)
    with open(out_path, "w") as f:
        for instance in values.tolist():
            f.write(json.dumps(instance) + "\n")


if __name__ == "__main__":
    try:
        if sys.argv[1] == "--random-inputs":
            write_random_inputs(*sys.argv[2:])
        else:
            main(*sys.argv[1:])
    except Exception as error:  # each check's own exception: the message is what a test shows
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
