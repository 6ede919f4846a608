"""The peer of benchmarks/ddp.sh: train_cnn.py's Fashion-MNIST CNN under PyTorch's
DistributedDataParallel (Gloo), one process per rank as torchrun starts them.

Run by scripts/torchrun (Debian's torchrun, repaired): each rank takes every world-th example of
the epoch's seeded order, as kiln's loader does, in batches of the global batch divided by the
ranks; DDP all-reduces the gradients in buckets while backward runs. Rank 0 prints one JSON line
with the job's samples and the training-loop time (between barriers, data loading excluded).
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch import nn

from train_cnn import load_split, model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--batch", type=int, default=128, help="the global batch")
    parser.add_argument("--threads", type=int, default=1, help="per rank")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1)
    x, y = load_split("train")
    net = nn.parallel.DistributedDataParallel(model())
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
    mean, inv_std = 0.286, 1 / 0.353
    per_rank = args.batch // world
    net.train()
    steps, epoch = 0, 0
    dist.barrier()
    start = time.perf_counter()
    while steps < args.steps:
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
        shard = order[rank:len(order) - len(order) % world:world]
        for first in range(0, len(shard), per_rank):
            index = shard[first:first + per_rank]
            inputs = (x.index_select(0, index) - mean) * inv_std
            targets = y.index_select(0, index)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(net(inputs), targets)
            loss.backward()
            optimizer.step()
            loss.item()
            steps += 1
            if steps == args.steps:
                break
        epoch += 1
    dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(json.dumps({"steps": steps, "samples": steps * per_rank * world,
                          "seconds": seconds}))
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
