"""The peer of benchmarks/gpu.sh: kiln's Fashion-MNIST CNN (configs/examples/fashion_mnist/cnn.yaml)
and ResNet-20 (resnet.yaml) trained by a PyTorch loop on the GPU, eager or through torch.compile.

The strongest loop a skilled user would write: the whole training split lives on the GPU, each
batch is gathered, normalized (and, for the ResNet, randomly cropped and flipped, as the config's
transforms do) there with whole-batch tensor operations, no .item() per step, set_to_none
zero_grad, the optimizer's fused CUDA kernel where PyTorch has one, and autocast for bf16.
Prints one JSON line: samples/s over the steps after warm-up, peak GPU memory, the last loss.
"""
import argparse
import gzip
import json
import time

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

ROOT = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.286, 0.353


def load_train(device):
    with gzip.open(f"{ROOT}/train-images-idx3-ubyte.gz", "rb") as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f"{ROOT}/train-labels-idx1-ubyte.gz", "rb") as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)
    x = torch.from_numpy(images.copy()).to(device).float().div_(255.0)
    return x, torch.from_numpy(labels.astype(np.int64)).to(device)


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))


class Block(nn.Module):
    """A basic residual block; a 1x1 convolution and batch norm on the shortcut where the shape
    changes, as kiln's resnet (and torchvision's) has."""

    def __init__(self, inputs, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inputs != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inputs, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.downsample(x) if self.downsample is not None else x))


class ResNet20(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        stages, channels = [], 16
        for stage in range(3):
            planes = 16 << stage
            for block in range(3):
                stages.append(Block(channels, planes, 2 if block == 0 and stage > 0 else 1))
                channels = planes
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.stages(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def augment(x):
    """Random crop of 28 from the image padded by 2 and a random horizontal flip, per image."""
    n = x.shape[0]
    padded = F.pad(x, (2, 2, 2, 2))
    dy = torch.randint(0, 5, (n, 1, 1), device=x.device)
    dx = torch.randint(0, 5, (n, 1, 1), device=x.device)
    rows = (torch.arange(28, device=x.device).view(1, 28, 1) + dy).expand(n, 28, 28)
    cols = (torch.arange(28, device=x.device).view(1, 1, 28) + dx).expand(n, 28, 28)
    flip = torch.rand(n, 1, 1, device=x.device) < 0.5
    cols = torch.where(flip, cols.flip(2), cols)
    index = (rows * 32 + cols).view(n, 1, 28 * 28)
    return padded.view(n, 1, 32 * 32).gather(2, index).view(n, 1, 28, 28)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=["cnn", "resnet"], required=True)
    parser.add_argument("--mode", choices=["eager", "compile"], default="eager")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--channels-last", action="store_true")
    args = parser.parse_args()
    device = torch.device("cuda")
    torch.manual_seed(1)
    torch.backends.cudnn.benchmark = True
    x, y = load_train(device)
    net = (cnn() if args.model == "cnn" else ResNet20()).to(device)
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    net = net.to(memory_format=memory_format)
    if args.model == "cnn":
        optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4, fused=True)
    else:
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                                    weight_decay=5e-4, fused=True)
    dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32

    def step(inputs, targets):
        with torch.autocast("cuda", dtype=dtype, enabled=args.precision == "bf16"):
            loss = F.cross_entropy(net(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    forward_backward = torch.compile(step) if args.mode == "compile" else step
    net.train()
    order = torch.randperm(len(x), device=device)
    position, loss, start, compile_seconds = 0, None, None, 0.0
    began = time.perf_counter()
    for done in range(args.steps + args.warmup):
        if done == args.warmup:
            torch.cuda.synchronize()
            start = time.perf_counter()
            compile_seconds = start - began
        if position + args.batch > len(x):
            order, position = torch.randperm(len(x), device=device), 0
        index = order[position:position + args.batch]
        position += args.batch
        inputs = (x.index_select(0, index) - MEAN) / STD
        if args.model == "resnet":
            inputs = augment(inputs)
        inputs = inputs.contiguous(memory_format=memory_format)
        loss = forward_backward(inputs, y.index_select(0, index))
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(json.dumps({
        "model": args.model, "mode": args.mode, "precision": args.precision,
        "channels_last": args.channels_last, "batch": args.batch, "steps": args.steps,
        "samples_per_s": args.steps * args.batch / seconds,
        "warmup_seconds": compile_seconds,
        "peak_mb": torch.cuda.max_memory_allocated() / 2**20, "loss": float(loss)}))


if __name__ == "__main__":
    main()
