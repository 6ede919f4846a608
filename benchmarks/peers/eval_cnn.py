"""The peer of benchmarks/eval_throughput.sh: `kiln eval` of the Fashion-MNIST CNN of
configs/examples/fashion_mnist/cnn.yaml written as a plain PyTorch evaluation loop.

Same model (train_cnn.py's), test split, normalisation, batch (the config's eval_batch_size),
threads and measurements: the summed cross-entropy and the correct predictions of every batch, in
eval mode without gradients. Prints one JSON line with the loop's time, excluding reading the
data, as `kiln eval` reports it.
"""
import argparse
import json
import time

import torch
from torch import nn

from train_cnn import load_split, model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    x, y = load_split("t10k")
    net = model().eval()
    mean, inv_std = 0.286, 1 / 0.353
    loss_sum, correct = 0.0, 0
    start = time.perf_counter()
    with torch.no_grad():
        for first in range(0, len(x), args.batch):
            inputs = (x[first:first + args.batch] - mean) * inv_std
            targets = y[first:first + args.batch]
            outputs = net(inputs)
            loss_sum += nn.functional.cross_entropy(outputs, targets, reduction="sum").item()
            correct += (outputs.argmax(1) == targets).sum().item()
    seconds = time.perf_counter() - start
    print(json.dumps({"examples": len(x), "seconds": seconds, "examples_per_s": len(x) / seconds,
                      "accuracy": correct / len(x), "loss": loss_sum / len(x)}))


if __name__ == "__main__":
    main()
