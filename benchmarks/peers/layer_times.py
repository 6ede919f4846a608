"""The peer of benchmarks/layer_times.sh: each layer's forward and backward time in a training
step of the Fashion-MNIST CNN (configs/examples/fashion_mnist/cnn.yaml), measured in PyTorch the
way `kiln bench` measures it in kiln: the clock read as each layer's call begins and ends, and
tensor hooks on its output (its backward begins) and on its input and parameters (it ends).

Same data, normalisation, model, optimizer (AdamW), batch, threads, warm-up and measured steps.
Prints one JSON object: per layer (by its index in the Sequential, as kiln's `layers.N`) the mean
forward and backward milliseconds per step, and the mean step.
"""
import argparse
import json
import time

import torch
from torch import nn

from train_cnn import load_split, model


class LayerClock:
    """Times each child of `net` as kiln's LayerTimer does."""

    def __init__(self, net):
        self.calls = []  # [index, forward begin, forward end, backward begin, input ready]
        self.params_ready = {}
        self.open = {}
        for index, layer in enumerate(net):
            layer.register_forward_pre_hook(self.pre_hook(index))
            layer.register_forward_hook(self.post_hook(index))
            for p in layer.parameters():
                p.register_hook(self.parameter_hook(index))

    def pre_hook(self, index):
        def hook(module, inputs):
            self.open[index] = time.perf_counter()
        return hook

    def post_hook(self, index):
        def hook(module, inputs, output):
            call = [index, self.open.pop(index), time.perf_counter(), 0.0, 0.0]
            self.calls.append(call)
            if output.requires_grad:
                output.register_hook(lambda grad: call.__setitem__(3, time.perf_counter()))
            if inputs[0].requires_grad:
                inputs[0].register_hook(lambda grad: call.__setitem__(4, time.perf_counter()))
        return hook

    def parameter_hook(self, index):
        def hook(grad):
            self.params_ready[index] = time.perf_counter()
        return hook

    def take(self):
        taken = []
        for index, begin, end, backward_begin, input_ready in self.calls:
            backward_end = max(backward_begin, input_ready, self.params_ready.get(index, 0.0))
            taken.append((index, end - begin, backward_end - backward_begin if backward_begin else 0))
        self.calls, self.params_ready = [], {}
        return taken


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    x, y = load_split("train")
    net = model()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
    clock = LayerClock(net)
    mean, inv_std = 0.286, 1 / 0.353
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    forward, backward, step_seconds = {}, {}, 0.0
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        index = order[step * args.batch:(step + 1) * args.batch]
        inputs = (x.index_select(0, index) - mean) * inv_std
        targets = y.index_select(0, index)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(net(inputs), targets)
        loss.backward()
        optimizer.step()
        loss.item()
        taken = clock.take()
        if step < args.warmup:
            continue
        step_seconds += time.perf_counter() - start
        for layer, f, b in taken:
            forward[layer] = forward.get(layer, 0.0) + f
            backward[layer] = backward.get(layer, 0.0) + b
    layers = {f"layers.{i}": {"forward_ms": 1e3 * forward[i] / args.steps,
                              "backward_ms": 1e3 * backward[i] / args.steps} for i in forward}
    print(json.dumps({"layers": layers, "step_ms": 1e3 * step_seconds / args.steps}))


if __name__ == "__main__":
    main()
