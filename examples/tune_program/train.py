#!/usr/bin/env python3
"""A training program of the user's own, tuned by `kiln tune` (docs/tuning.md, "Tuning any
program"): linear regression by gradient descent with momentum, in plain Python, on a fixed
synthetic data set (y = 3 x0 - 2 x1 + 0.5 + noise; 200 training and 100 validation rows).

    python3 train.py --lr 0.05 --momentum 0.9 [--epochs 30] [--pause 0]

It reports its validation loss after every epoch the way kiln reads it, a printed line

    kiln-metric val_loss=0.0123 step=7

and, when kiln names a metrics file (KILN_METRICS_FILE), the same as a JSON line there. The last
line, without a step, is its final value. kiln stops a trial it prunes with SIGTERM; the default
action (the end) is all it needs. It keeps a checkpoint in KILN_TRIAL_DIR after each epoch and
goes on from it when `kiln tune --resume` starts it again (KILN_TUNE_RESUMED=1). --pause makes
each epoch last that many seconds longer, so that a trial can be watched (or killed) mid-run."""
import argparse
import json
import math
import os
import random
import time


def data(count, seed):
    rows = random.Random(seed)
    made = []
    for _ in range(count):
        x = [rows.uniform(-1, 1), rows.uniform(-1, 1)]
        made.append((x, 3 * x[0] - 2 * x[1] + 0.5 + rows.gauss(0, 0.1)))
    return made


def loss(weights, rows):
    errors = [weights[0] * x[0] + weights[1] * x[1] + weights[2] - y for x, y in rows]
    return sum(e * e for e in errors) / len(rows)  # e * e: a diverged fit gives inf, not an error


def bounded(value):
    """A diverged fit's loss, held to a large finite number: kiln takes finite values only."""
    return value if math.isfinite(value) and value < 1e6 else 1e6


def report(values, step=None):
    words = " ".join("%s=%.10g" % item for item in values.items())
    print("kiln-metric " + words + ("" if step is None else " step=%d" % step), flush=True)
    metrics_file = os.environ.get("KILN_METRICS_FILE")
    if metrics_file:
        record = dict(values, **({} if step is None else {"step": step}))
        with open(metrics_file, "a") as out:
            out.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--pause", type=float, default=0.0)
    args = parser.parse_args()
    train, val = data(200, 1), data(100, 2)
    weights, velocity, first = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0
    checkpoint = os.path.join(os.environ.get("KILN_TRIAL_DIR", "."), "checkpoint.json")
    if os.environ.get("KILN_TUNE_RESUMED") == "1" and os.path.exists(checkpoint):
        with open(checkpoint) as f:
            saved = json.load(f)
        weights, velocity, first = saved["weights"], saved["velocity"], saved["epoch"] + 1
        print("resumed from epoch %d" % saved["epoch"], flush=True)
    for epoch in range(first, args.epochs):
        for x, y in train:  # one step per row
            error = weights[0] * x[0] + weights[1] * x[1] + weights[2] - y
            for i, g in enumerate((2 * error * x[0], 2 * error * x[1], 2 * error)):
                velocity[i] = args.momentum * velocity[i] - args.lr * g
                weights[i] += velocity[i]
        val_loss = bounded(loss(weights, val))
        if val_loss == 1e6:
            print("diverged at epoch %d" % epoch, flush=True)
        # The checkpoint first, then the report: a reported epoch is never trained again.
        if "KILN_TRIAL_DIR" in os.environ:
            with open(checkpoint + ".tmp", "w") as f:
                json.dump({"weights": weights, "velocity": velocity, "epoch": epoch}, f)
            os.replace(checkpoint + ".tmp", checkpoint)
        report({"val_loss": val_loss, "train_loss": bounded(loss(weights, train))}, step=epoch)
        time.sleep(args.pause)
    report({"val_loss": bounded(loss(weights, val))})


if __name__ == "__main__":
    main()
