#!/usr/bin/env bash
# Per-layer times of a training step: `kiln bench` against the same measurement in PyTorch.
#
#   benchmarks/layer_times.sh [STEPS] [RUNS]
#
# Both take configs/examples/fashion_mnist/cnn.yaml's CNN on Fashion-MNIST (batch 128, AdamW, all
# cores), run 3 warm-up steps and then STEPS measured ones, and time each layer's forward and
# backward the same way (the clock around each call, autograd hooks for backward:
# benchmarks/peers/layer_times.py). Runs alternate RUNS times; the table shows each layer's median
# milliseconds per step on both sides and their ratio (> 1: kiln slower), then the whole step.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-20}
runs=${2:-3}
threads=$(nproc)
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for i in $(seq "$runs"); do
  "$kiln" bench configs/examples/fashion_mnist/cnn.yaml --steps "$steps" --warmup 3 --json \
    --set "runtime.threads=$threads" > "$work/kiln.$i.json" 2> /dev/null
  "$python" benchmarks/peers/layer_times.py --steps "$steps" --warmup 3 --threads "$threads" \
    > "$work/peer.$i.json"
  echo "run $i done" >&2
done

"$python" - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
kiln = [json.load(open(f"{work}/kiln.{i}.json")) for i in range(1, runs + 1)]
peer = [json.load(open(f"{work}/peer.{i}.json")) for i in range(1, runs + 1)]
types = {l["path"]: l["type"] for l in kiln[0]["layers"]}
def kiln_ms(path, key):
    return statistics.median(next(l[key] for l in k["layers"] if l["path"] == path) for k in kiln)
def peer_ms(path, key):
    return statistics.median(p["layers"][path][key] for p in peer)
print("| layer | type | kiln forward ms | PyTorch forward ms | ratio | kiln backward ms | PyTorch backward ms | ratio |")
print("|---|---|---|---|---|---|---|---|")
for path in sorted(peer[0]["layers"], key=lambda p: int(p.split(".")[1])):
    kf, pf = kiln_ms(path, "forward_ms"), peer_ms(path, "forward_ms")
    kb, pb = kiln_ms(path, "backward_ms"), peer_ms(path, "backward_ms")
    ratio = lambda a, b: f"{a / b:.2f}" if b > 0 else "-"
    print(f"| {path} | {types.get(path, '?')} | {kf:.3f} | {pf:.3f} | {ratio(kf, pf)} | {kb:.3f} | {pb:.3f} | {ratio(kb, pb)} |")
ks = statistics.median(k["step_ms"] for k in kiln)
ps = statistics.median(p["step_ms"] for p in peer)
print(f"| step | | {ks:.2f} | {ps:.2f} | {ks / ps:.2f} | | | |")
PY
