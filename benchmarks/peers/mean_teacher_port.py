"""The peer of benchmarks/mean_teacher.sh: configs/examples/fashion_mnist/mean_teacher.yaml's mean
teacher written in PyTorch's Python API, as a user of it would port the loop.

The same data and split of roles (Fashion-MNIST; a tenth of the training images held out for
validation and 100 labelled images of each class among the rest, drawn by this script's own seed,
the other 53,000 used without their labels; the labelled ones repeated 18 times an epoch, as
`labelled_share: 0.25` repeats them), the same augmentation (a random crop of 28 after padding 2,
a random horizontal flip, normalisation by 0.286 / 0.353), network, initialisation scheme
(PyTorch's defaults, as LibTorch's), AdamW, batch size, epochs and threads (the BLAS on one, as
kiln runs it). The loss, as kiln's loop computes it: the labelled rows' cross-entropy times the
labelled share of the batch, plus w(n) * mean((softmax(s) - softmax(t))^2) with the student and
the teacher each on the batch plus its own Gaussian noise, w ramped up as exp(-5 (1 - n / 1000)^2)
to 10; the teacher the student's parameters averaged after every update with a = min(1 - 1 /
(n + 1), 0.99), run in training mode without gradients. The teacher is validated after every
epoch; the best one is evaluated on the test split. Prints one JSON line: the test accuracy,
the best validation accuracy and the training loop's samples per second (validation excluded).
"""
import argparse
import copy
import gzip
import json
import math
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

ROOT = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.286, 0.353


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load(prefix):
    images = read_idx(f"{ROOT}/{prefix}-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    labels = read_idx(f"{ROOT}/{prefix}-labels-idx1-ubyte.gz", 8)
    return torch.from_numpy(images.copy()), torch.from_numpy(labels.astype(np.int64))


def network():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.3), nn.Linear(64 * 7 * 7, 10))


def augment(images, generator):
    """A random 28x28 window of each image padded by 2, flipped left-right half the time."""
    n = images.shape[0]
    padded = F.pad(images, (2, 2, 2, 2))
    dy = torch.randint(0, 5, (n,), generator=generator)
    dx = torch.randint(0, 5, (n,), generator=generator)
    rows = (dy[:, None] + torch.arange(28)[None, :])[:, None, :, None].expand(n, 1, 28, 32)
    cropped = padded.gather(2, rows)
    cols = (dx[:, None] + torch.arange(28)[None, :])[:, None, None, :].expand(n, 1, 28, 28)
    cropped = cropped.gather(3, cols)
    flip = torch.rand(n, generator=generator) < 0.5
    cropped[flip] = cropped[flip].flip(3)
    return (cropped - MEAN) / STD


@torch.no_grad()
def accuracy(model, images, labels, batch=1000):
    model.eval()
    right = 0
    for start in range(0, len(images), batch):
        x = (images[start:start + batch].float() / 255 - MEAN) / STD
        right += (model(x).argmax(1) == labels[start:start + batch]).sum().item()
    return right / len(images)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    images, labels = load("train")
    test_images, test_labels = load("t10k")
    order = torch.randperm(len(images), generator=generator)
    val, train = order[:6000], order[6000:]
    labelled, unlabelled, kept = [], [], [0] * 10
    for index in train.tolist():
        label = int(labels[index])
        (labelled if kept[label] < 100 else unlabelled).append(index)
        kept[label] = min(kept[label] + 1, 100)
    repeats = max(1, round(0.25 / 0.75 * len(unlabelled) / len(labelled)))
    rows = torch.tensor(unlabelled + labelled * repeats)
    is_labelled = torch.zeros(len(images), dtype=torch.bool)
    is_labelled[torch.tensor(labelled)] = True

    student = network().train()
    teacher = copy.deepcopy(student).train()
    for p in teacher.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.AdamW(student.parameters(), lr=1e-3, weight_decay=1e-4)
    updates, trained, samples = 0, 0.0, 0
    best, best_state = -1.0, None
    for epoch in range(args.epochs):
        started = time.perf_counter()
        shuffled = rows[torch.randperm(len(rows), generator=generator)]
        for start in range(0, len(shuffled), 128):
            batch = shuffled[start:start + 128]
            x = augment(images[batch].float() / 255, generator)
            y = labels[batch]
            known = is_labelled[batch]
            s = student(x + torch.randn_like(x) * 0.15)
            with torch.no_grad():
                t = teacher(x + torch.randn_like(x) * 0.15)
            w = 10.0 * math.exp(-5.0 * (1 - min(1.0, updates / 1000)) ** 2)
            loss = w * F.mse_loss(F.softmax(s, 1), F.softmax(t, 1))
            if known.any():
                loss = loss + F.cross_entropy(s[known], y[known]) * known.sum() / len(batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            updates += 1
            decay = min(1 - 1 / (updates + 1), 0.99)
            with torch.no_grad():
                for a, p in zip(teacher.parameters(), student.parameters()):
                    a.mul_(decay).add_(p, alpha=1 - decay)
            samples += len(batch)
        trained += time.perf_counter() - started
        score = accuracy(teacher, images[val], labels[val])
        teacher.train()
        if score > best:
            best, best_state = score, copy.deepcopy(teacher.state_dict())
    teacher.load_state_dict(best_state)
    print(json.dumps({"test_accuracy": accuracy(teacher, test_images, test_labels),
                      "best_val_accuracy": best, "samples_per_s": samples / trained,
                      "seed": args.seed}))


if __name__ == "__main__":
    main()
