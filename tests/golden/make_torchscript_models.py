#!/usr/bin/python3
"""Writes the TorchScript models kiln serves in its tests, as a PyTorch user would: modules
scripted with torch.jit.script and saved with torch.jit.save, each in a version folder beside the
model.yaml that gives its signatures, and expected.json with what PyTorch computes for them.

Re-run from the repository root after changing a model:

    /usr/bin/python3 tests/golden/make_torchscript_models.py

It needs Debian's python3-torch (torch 1.13, as the LibTorch kiln links). It writes under
tests/golden/torchscript/:
  classifier/1/   a linear classifier of 4 features into 3 labelled classes, returning its logits
  two_heads/1/    a model returning a dict of two outputs: `kind` (2 classes) and `size` (1 value)
  expected.json   the inputs and, per model, the outputs PyTorch computes for them
"""

import json
import os
from typing import Dict

import torch

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchscript")


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(torch.tanh(x))


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(4, 8)
        self.kind = torch.nn.Linear(8, 2)
        self.size = torch.nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        features = torch.relu(self.body(x))
        return {"kind": self.kind(features), "size": self.size(features)}


def spec(dtype, shape, **more):
    return dict({"dtype": dtype, "shape": shape}, **more)


INPUTS = {"input": spec("float32", [-1, 4])}

CLASSIFIER_YAML = {
    "format": "torchscript",
    "format_version": 1,
    "name": "classifier",
    "inputs": [{"name": "input", "shape": [4], "dtype": "float32"}],
    "labels": ["cat", "dog", "owl"],
    "signatures": {
        "serving_default": {
            "inputs": INPUTS,
            "outputs": {
                "classes": spec("string", [-1], op="argmax_label"),
                "class_ids": spec("int64", [-1], op="argmax"),
                "probabilities": spec("float32", [-1, 3], op="softmax"),
                "logits": spec("float32", [-1, 3]),
            },
        }
    },
}

TWO_HEADS_YAML = {
    "format": "torchscript",
    "format_version": 1,
    "name": "two_heads",
    "inputs": [{"name": "input", "shape": [4], "dtype": "float32"}],
    "signatures": {
        "serving_default": {
            "inputs": INPUTS,
            "outputs": {
                "kind/probabilities": spec("float32", [-1, 2], **{"from": "kind", "op": "softmax"}),
                "size/predictions": spec("float32", [-1, 1], **{"from": "size"}),
            },
        }
    },
}


def write_version(name, module, yaml_text):
    folder = os.path.join(HERE, name, "1")
    os.makedirs(folder, exist_ok=True)
    torch.jit.save(torch.jit.script(module.eval()), os.path.join(folder, "model.pt"))
    with open(os.path.join(folder, "model.yaml"), "w") as out:
        out.write(yaml_text)


def rounded(tensor):
    return [[float("%.7g" % v) for v in row] for row in tensor.tolist()]


def main():
    torch.manual_seed(7)
    classifier, two_heads = Classifier(), TwoHeads()
    # JSON is YAML: model.yaml is written as JSON, one key per line.
    write_version("classifier", classifier, json.dumps(CLASSIFIER_YAML, indent=1) + "\n")
    write_version("two_heads", two_heads, json.dumps(TWO_HEADS_YAML, indent=1) + "\n")
    inputs = torch.round(torch.randn(5, 4) * 1e4) / 1e4
    with torch.no_grad():
        logits = classifier(inputs)
        heads = two_heads(inputs)
    expected = {
        "inputs": inputs.tolist(),
        "classifier": {
            "logits": rounded(logits),
            "probabilities": rounded(logits.softmax(1)),
            "class_ids": logits.argmax(1).tolist(),
        },
        "two_heads": {
            "kind/probabilities": rounded(heads["kind"].softmax(1)),
            "size/predictions": rounded(heads["size"]),
        },
    }
    with open(os.path.join(HERE, "expected.json"), "w") as out:
        json.dump(expected, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
