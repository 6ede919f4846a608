#!/usr/bin/python3
"""Writes the CNN of configs/examples/fashion_mnist/cnn.yaml, with a kiln export's weights, as a
TorchScript version folder that kiln serves (model.pt from torch.jit.save, and its model.yaml),
for benchmarks/inference_optimize.sh. The model is serve_flask.py's, as a PyTorch user has it.

    KILN_EXPORT=EXPORT_VERSION_DIR /usr/bin/python3 benchmarks/peers/script_cnn.py OUT_VERSION_DIR
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_flask import LABELS, model  # noqa: E402  (the model with $KILN_EXPORT's weights)


def spec(dtype, shape, **more):
    return dict({"dtype": dtype, "shape": shape}, **more)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.jit.save(torch.jit.script(model), os.path.join(out, "model.pt"))
    image = {"channels": 1, "height": 28, "width": 28, "layout": "chw", "scale": 1 / 255}
    yaml = {
        "format": "torchscript",
        "format_version": 1,
        "name": "fashion_cnn_script",
        "inputs": [{"name": "input", "shape": [1, 28, 28], "dtype": "float32", "image": image}],
        "labels": LABELS,
        "transforms": [{"type": "normalize", "mean": 0.286, "std": 0.353}],
        "signatures": {"serving_default": {
            "inputs": {"input": spec("float32", [-1, 1, 28, 28], image=image)},
            "outputs": {
                "classes": spec("string", [-1], op="argmax_label"),
                "class_ids": spec("int64", [-1], op="argmax"),
                "probabilities": spec("float32", [-1, 10], op="softmax"),
                "logits": spec("float32", [-1, 10]),
            }}},
    }
    with open(os.path.join(out, "model.yaml"), "w") as f:
        json.dump(yaml, f, indent=1)  # JSON is YAML


if __name__ == "__main__":
    main()
