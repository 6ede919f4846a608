#!/usr/bin/env bash
# A whole run, from launch to the printed result: one epoch of a small Fashion-MNIST CNN (conv 32,
# batch norm, ReLU, max pool, conv 64, batch norm, ReLU, max pool, linear 10) with Adam, batches
# of 128, 2 threads, then its accuracy on the 10,000 test images, as `kiln train` of the config
# below against a plain PyTorch script doing the same (benchmarks/peers/whole_run_cnn.py). The
# two alternate RUNS times; the table gives the medians of the whole process and of its phases,
# read from the times at which each prints its lines (benchmarks/peers/line_times.py):
#   start-up  launch to the first step: LibTorch or torch loaded, config read, data read, model
#             built (kiln: its "model:" line; the peer: its "data" mark; `kiln --version` alone
#             is shown too, LibTorch's share)
#   train     to the end of the epoch (kiln: its step-469 line; the peer: "train")
#   evaluate  the test images (kiln: its validation line; the peer: "eval")
#   end       to the process's exit (kiln: its checkpoint, summary and TensorBoard writes)
#
#   benchmarks/whole_run.sh [RUNS]      default 5
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/cnn.yaml" <<'YAML'
version: 1
name: whole_run
seed: 1
data:
  train: {type: fashion_mnist, split: train}
  val: {type: fashion_mnist, split: test}
  batch_size: 128
  eval_batch_size: 1000
  transforms:
    train: [{type: normalize, mean: 0.286, std: 0.353}]
    eval: [{type: normalize, mean: 0.286, std: 0.353}]
model:
  type: sequential
  layers:
    - {type: conv2d, out: 32, kernel: 3, padding: same}
    - batchnorm
    - relu
    - {type: maxpool, kernel: 2}
    - {type: conv2d, out: 64, kernel: 3, padding: same}
    - batchnorm
    - relu
    - {type: maxpool, kernel: 2}
    - flatten
    - {type: linear, out: 10}
loss: cross_entropy
metrics: [accuracy]
optimizer: {type: adam, lr: 1.0e-3}
train: {max: 1 epoch, validate_every: 1 epoch, log_every: 469 steps}
runtime: {device: cpu, threads: 2}
YAML

for i in $(seq "$runs"); do
  "$python" benchmarks/peers/line_times.py "$kiln" --version > "$work/version.$i"
  "$python" benchmarks/peers/line_times.py "$kiln" train "$work/cnn.yaml" \
    --runs-root "$work/runs" > "$work/kiln.$i"
  "$python" benchmarks/peers/line_times.py "$python" benchmarks/peers/whole_run_cnn.py 2 \
    > "$work/peer.$i"
  printf . >&2
done
echo >&2

"$python" - "$work" "$runs" <<'PY'
import re
import statistics
import sys

work, runs = sys.argv[1], int(sys.argv[2])


def times(path):
    return [(float(line.split(" ", 1)[0]), line.split(" ", 1)[1].rstrip("\n"))
            for line in open(path)]


def first(lines, pattern):
    for seconds, text in lines:
        if re.search(pattern, text):
            return seconds, text
    sys.exit(f"whole_run.sh: no line matching {pattern!r}")


rows = {"kiln": [], "peer": []}
libtorch = []
for i in range(1, runs + 1):
    libtorch.append(first(times(f"{work}/version.{i}"), r"^exit 0")[0])
    k = times(f"{work}/kiln.{i}")
    ready, trained = first(k, r"model: ")[0], first(k, r"step 469 ")[0]
    evaluated, accuracy = first(k, r"validation at step")
    end = first(k, r"^exit 0")[0]
    rows["kiln"].append((end, ready, trained - ready, evaluated - trained, end - evaluated,
                         float(re.search(r"val/accuracy ([0-9.]+)", accuracy).group(1))))
    p = times(f"{work}/peer.{i}")
    ready, trained, evaluated = (first(p, rf"^phase {name} ")[0] for name in ("data", "train", "eval"))
    end = first(p, r"^exit 0")[0]
    rows["peer"].append((end, ready, trained - ready, evaluated - trained, end - evaluated,
                         float(first(p, r"^test accuracy")[1].split()[-1])))


def median(who, column):
    return statistics.median(r[column] for r in rows[who])


print(f"| {runs} runs, medians | whole process s | start-up s | train s | evaluate s | end s "
      f"| test accuracy |")
print("|---|---|---|---|---|---|---|")
for who, name in (("kiln", "kiln train"), ("peer", "PyTorch script")):
    print(f"| {name} | {median(who, 0):.2f} | {median(who, 1):.2f} | {median(who, 2):.2f} "
          f"| {median(who, 3):.2f} | {median(who, 4):.2f} | {median(who, 5):.4f} |")
ratios = [p[0] / k[0] for k, p in zip(rows["kiln"], rows["peer"])]
print(f"| PyTorch / kiln | {statistics.median(ratios):.2f} "
      + " ".join(f"| {median('peer', c) / median('kiln', c):.2f}" for c in (1, 2, 3, 4))
      + " | |")
print(f"\nkiln --version alone (LibTorch loaded, nothing run): median "
      f"{statistics.median(libtorch):.2f} s. Per run PyTorch / kiln, whole process: "
      + ", ".join(f"{r:.2f}" for r in ratios))
PY
