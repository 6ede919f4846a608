"""The peer of benchmarks/custom_step.sh: the module of configs/examples/fashion_mnist/custom_step.py
trained by PyTorch in eager mode, as its author would train it without kiln.

The same initial weights (read from custom_step.pt, the file kiln trains), the same images in the
same order (the first STEPS x 128 training images of the Debian IDX files, in file order, scaled
to [0, 1] as kiln's fashion_mnist dataset delivers them), the same step (the module's own
training_step), AdamW with kiln's settings (or SGD), deterministic algorithms, the same threads
(ATen's, and the BLAS on one, as kiln runs it). Prints
one JSON line: the loss of every step, and the training loop's time, data loading excluded.
"""
import argparse
import gzip
import importlib.util
import json
import os
import time

# kiln runs the BLAS on one thread (its parallelism is ATen's intra-op threads, runtime.threads);
# OpenBLAS reads this as it loads, with torch. With OpenBLAS's own threads the sums of a matrix
# product are taken in another order, and the curves part in the last bits from the first steps
# on (3e-3 apart after 100 steps).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = "/usr/share/datasets/fashion-mnist"
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs",
                       "examples", "fashion_mnist")


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def eager_module():
    """FashionStep from the example's script, holding the weights kiln starts from."""
    spec = importlib.util.spec_from_file_location("custom_step", f"{EXAMPLE}/custom_step.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    model = script.FashionStep()
    model.load_state_dict(torch.jit.load(f"{EXAMPLE}/custom_step.pt").state_dict())
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--momentum", type=float, default=0.9)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    count = args.steps * args.batch
    images = read_idx(f"{ROOT}/train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)[:count]
    labels = read_idx(f"{ROOT}/train-labels-idx1-ubyte.gz", 8)[:count]
    x = torch.from_numpy(images.copy()).float().div_(255.0)
    y = torch.from_numpy(labels.astype(np.int64))
    model = eager_module().train()
    if args.optimizer == "adamw":
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr,
                                      weight_decay=args.weight_decay)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    losses = []
    started = time.perf_counter()
    for step in range(args.steps):
        rows = slice(step * args.batch, (step + 1) * args.batch)
        optimizer.zero_grad(set_to_none=True)
        loss = model.training_step({"input": x[rows], "target": y[rows]})["loss"]
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    seconds = time.perf_counter() - started
    print(json.dumps({"samples": count, "seconds": seconds, "losses": losses}))


if __name__ == "__main__":
    main()
