"""The peer of benchmarks/train_throughput.sh: the Fashion-MNIST CNN of
configs/examples/fashion_mnist/cnn.yaml written as a plain PyTorch training loop.

Same data (the Debian IDX files), normalisation, model, initialisation scheme (PyTorch defaults,
as LibTorch's), optimizer, batch size, threads and number of steps. Prints one JSON line with the
training-loop time, excluding data loading, as kiln's summary.json `seconds` does.

With --engine, each step also does what kiln's engine adds with `scheduler: cosine`,
`train.clip_norm: 1.0` and an `ema` callback (decay 0.999, no warm-up): a cosine learning rate,
gradients clipped to global norm 1 (the norm read back, as kiln logs it) and an exponential moving
average of every parameter and buffer.
"""
import argparse
import gzip
import json
import time

import numpy as np
import torch
from torch import nn

ROOT = "/usr/share/datasets/fashion-mnist"


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load_split(prefix):
    """Images scaled to [0, 1] and labels of the split whose files start with `prefix`."""
    images = read_idx(f"{ROOT}/{prefix}-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    labels = read_idx(f"{ROOT}/{prefix}-labels-idx1-ubyte.gz", 8)
    x = torch.from_numpy(images.copy()).float().div_(255.0)
    return x, torch.from_numpy(labels.astype(np.int64))


def model():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))


@torch.no_grad()
def update_average(average, state, decay):
    for name, value in state.items():
        if value.is_floating_point():
            average[name].mul_(decay).add_(value, alpha=1 - decay)
        else:
            average[name].copy_(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--engine", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    x, y = load_split("train")
    net = model()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
    if args.engine:
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
        average = {k: v.detach().clone() for k, v in net.state_dict().items()}
    mean, inv_std = 0.286, 1 / 0.353
    net.train()
    steps, epoch, samples = 0, 0, 0
    start = time.perf_counter()
    while steps < args.steps:
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
        for first in range(0, len(x), args.batch):
            index = order[first:first + args.batch]
            inputs = (x.index_select(0, index) - mean) * inv_std
            targets = y.index_select(0, index)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(net(inputs), targets)
            loss.backward()
            if args.engine:
                nn.utils.clip_grad_norm_(net.parameters(), 1.0).item()
            optimizer.step()
            if args.engine:
                schedule.step()
                update_average(average, net.state_dict(), 0.999)
            loss.item()
            steps += 1
            samples += len(index)
            if steps == args.steps:
                break
        epoch += 1
    seconds = time.perf_counter() - start
    print(json.dumps({"steps": steps, "samples": samples, "seconds": seconds}))


if __name__ == "__main__":
    main()
