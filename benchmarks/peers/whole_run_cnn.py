#!/usr/bin/python3
"""The peer of benchmarks/whole_run.sh: one epoch of a small Fashion-MNIST CNN and its test
accuracy as a plain PyTorch script, from launch to the printed result: import torch, read the
Debian IDX files, build the model (conv 32, batch norm, ReLU, max pool, conv 64, batch norm,
ReLU, max pool, linear 10; PyTorch's default initialisation), train one epoch of shuffled
batches of 128 normalised images with Adam (lr 1e-3) on 2 threads, evaluate the 10,000 test
images in batches of 1000 under torch.inference_mode, and print the accuracy. Each phase's end
is printed as it happens ("phase NAME SECONDS", seconds since the interpreter started), as
kiln's log lines mark its own.
"""
import gzip
import sys
import time

STARTED = time.perf_counter()


def mark(name):
    print(f"phase {name} {time.perf_counter() - STARTED:.3f}", flush=True)


import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

mark("imports")
ROOT = "/usr/share/datasets/fashion-mnist"


def split(prefix):
    with gzip.open(f"{ROOT}/{prefix}-images-idx3-ubyte.gz", "rb") as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f"{ROOT}/{prefix}-labels-idx1-ubyte.gz", "rb") as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)
    x = (torch.from_numpy(images.copy()).float() / 255.0 - 0.286) / 0.353
    return x, torch.from_numpy(labels.astype(np.int64))


def main():
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    torch.manual_seed(1)
    x, y = split("train")
    test_x, test_y = split("t10k")
    mark("data")
    net = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 10))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    net.train()
    order = torch.randperm(len(x))
    for step, first in enumerate(range(0, len(x), 128)):
        index = order[first:first + 128]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(net(x[index]), y[index])
        loss.backward()
        optimizer.step()
        if step == 0:
            mark("first_step")
    loss.item()
    mark("train")
    net.eval()
    correct = 0
    with torch.inference_mode():
        for first in range(0, len(test_x), 1000):
            correct += (net(test_x[first:first + 1000]).argmax(1) == test_y[first:first + 1000]).sum()
    mark("eval")
    print(f"test accuracy {int(correct) / len(test_x):.4f}", flush=True)


if __name__ == "__main__":
    main()
