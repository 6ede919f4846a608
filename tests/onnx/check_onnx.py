#!/usr/bin/python3
"""Checks a model.onnx that `kiln export --format onnx` wrote, with tools kiln does not share code
with: the onnx package's checker and strict shape inference (Debian's python3-onnx), then OpenCV's
DNN module (python3-opencv) runs it on the examples of a JSON lines file (one instance per line,
as `kiln predict --input` takes them) and its outputs are compared with `kiln predict`'s JSON
lines for the same file.

    check_onnx.py MODEL.onnx [INPUT.jsonl EXPECTED.jsonl]
    check_onnx.py --random-inputs MODEL.onnx OUT.jsonl      writes 4 random instances of the
                                                           model's input shape, for kiln predict

Prints one JSON object: the checks passed, the outputs compared and, for each, the largest
absolute difference from kiln's (class ids: how many differ). Without the two files, only the
checker and shape inference run (models OpenCV 4.6 cannot run). Exits 1 when a check fails."""
import json
import sys

import cv2
import numpy as np
import onnx
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
    net = cv2.dnn.readNetFromONNX(model_path)
    net.setInput(batch.astype(np.float32) if element != np.float32 else batch, graph_input.name)
    values = net.forward(report["outputs"])
    expected = read_lines(expected_path)
    differences = {}
    for name, value in zip(report["outputs"], values):
        kiln = np.array([line[name] for line in expected], dtype=np.float64)
        ours = np.asarray(value, dtype=np.float64).reshape(kiln.shape)
        if name.split("/")[-1] in ("class_ids", "classes"):
            differences[name] = int(np.sum(ours != kiln))
        else:
            differences[name] = float(np.max(np.abs(ours - kiln))) if kiln.size else 0.0
    report["max_abs_difference"] = differences
    report["examples"] = len(instances)
    print(json.dumps(report))


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
