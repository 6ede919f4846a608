"""The Python peer of benchmarks/serve.sh: the Fashion-MNIST CNN of
configs/examples/fashion_mnist/cnn.yaml in PyTorch behind Flask, deployed as Python users deploy a
model: gunicorn runs this app in worker processes, one torch thread each.

It loads the weights kiln exported (KILN_EXPORT: a version folder; model.safetensors is read here
without the safetensors package), so both servers compute the same function, and answers
TensorFlow Serving's row-form :predict as kiln does: class_ids, classes, probabilities, logits.

    KILN_EXPORT=exports/fashion_cnn/1 gunicorn -w 2 -b 127.0.0.1:8600 \
        --chdir benchmarks/peers serve_flask:app
"""
import json
import os
import struct

import flask
import torch
from torch import nn

torch.set_num_threads(1)

LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
          "Bag", "Ankle boot"]
DTYPES = {"F32": torch.float32, "I64": torch.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        values = torch.frombuffer(bytearray(data[start:end]), dtype=DTYPES[info["dtype"]])
        tensors[name] = values.reshape(info["shape"])
    return tensors


def build_model():
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))
    weights = read_safetensors(os.path.join(os.environ["KILN_EXPORT"], "model.safetensors"))
    # kiln names a sequential model's layers layers.INDEX, as nn.Sequential numbers them.
    model.load_state_dict({name[len("layers."):]: value for name, value in weights.items()})
    return model.eval()


model = build_model()
app = flask.Flask(__name__)


@app.post("/v1/models/fashion_cnn:predict")
def predict():
    instances = flask.request.get_json()["instances"]
    with torch.inference_mode():
        images = torch.tensor(instances, dtype=torch.float32)
        logits = model((images - 0.286) / 0.353)
        probabilities = logits.softmax(1)
        class_ids = logits.argmax(1)
    predictions = [{"class_ids": int(c), "classes": LABELS[int(c)], "logits": l.tolist(),
                    "probabilities": p.tolist()}
                   for c, l, p in zip(class_ids, logits, probabilities)]
    return flask.jsonify({"predictions": predictions})
