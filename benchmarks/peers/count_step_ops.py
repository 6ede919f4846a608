"""The operators one training step of PyTorch's eager loop dispatches, counted on the CPU with
torch.profiler: the peer of kiln's operator-count test (issue: a step that never waits for the
GPU, and no more launches than PyTorch's multi-tensor loop).

The step is the one benchmarks/peers/train_cnn.py times, for the Fashion-MNIST CNN of
configs/examples/fashion_mnist/cnn.yaml with AdamW (foreach=True: multi-tensor updates), batch
128: zero_grad, forward, cross-entropy, backward, update. A non-logging step reads nothing back.
Every dispatched aten:: operator counts, nested ones too, as LibTorch's RecordFunction callbacks
count them in kiln. Prints one JSON line: {"operators": N, "local_scalar_dense": M, "by_name":
{...}}.
"""
import argparse
import json
from collections import Counter

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

from train_cnn import model


def step(net, optimizer, inputs, targets):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(net(inputs), targets)
    loss.backward()
    optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--foreach", type=int, default=1, help="1: multi-tensor AdamW; 0: per parameter")
    args = parser.parse_args()
    torch.manual_seed(1)
    net = model()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4,
                                  foreach=bool(args.foreach))
    inputs = torch.randn(args.batch, 1, 28, 28)
    targets = torch.randint(0, 10, (args.batch,))
    net.train()
    for _ in range(2):  # the optimizer's state exists from the first step on
        step(net, optimizer, inputs, targets)
    with profile(activities=[ProfilerActivity.CPU]) as measured:
        step(net, optimizer, inputs, targets)
    names = Counter(event.name for event in measured.events() if event.name.startswith("aten::"))
    print(json.dumps({"operators": sum(names.values()),
                      "local_scalar_dense": names.get("aten::_local_scalar_dense", 0),
                      "by_name": dict(sorted(names.items()))}))


if __name__ == "__main__":
    main()
