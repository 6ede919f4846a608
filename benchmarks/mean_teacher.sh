#!/usr/bin/env bash
# The mean teacher: kiln's loop against its port to PyTorch's Python API, and against the same
# network trained on the labelled images alone.
#
#   benchmarks/mean_teacher.sh [SEEDS]        e.g. "1 2 3" (default)
#
# For each seed: configs/examples/fashion_mnist/mean_teacher.yaml trained by kiln (1,000 labels,
# 6 epochs; its best checkpoint evaluated on the test split), the same with `loop: supervised`
# on the 1,000 labelled images alone for 60 epochs, and benchmarks/peers/mean_teacher_port.py
# (the same loop in PyTorch). Prints each run's test accuracy and samples/s, then the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-"1 2 3"}
threads=$(nproc)
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
config=configs/examples/fashion_mnist/mean_teacher.yaml

# test accuracy and samples/s of a kiln run: train with `$@`, evaluate its best checkpoint
kiln_run() {
  "$kiln" train "$config" --runs-root "$work" --set "runtime.threads=$threads" "$@" > "$work/out"
  local run; run=$(sed -n 's/^run: //p' "$work/out")
  local test; test=$("$kiln" eval "$run" --split test | awk '$1 == "test/accuracy" {print $2}')
  "$python" -c "import json; s=json.load(open('$run/summary.json')); print($test, s['samples']/s['seconds'])"
}

: > "$work/rows"
for seed in $seeds; do
  read -r mt mt_rate < <(kiln_run --set "seed=$seed")
  read -r alone alone_rate < <(kiln_run --set "seed=$seed" --set loop=supervised \
    --set data.labelled_share=1 --set 'train.max=60 epochs')
  port=$("$python" benchmarks/peers/mean_teacher_port.py --seed "$seed" --threads "$threads")
  pt=$(echo "$port" | "$python" -c "import json,sys; print(json.load(sys.stdin)['test_accuracy'])")
  pt_rate=$(echo "$port" | "$python" -c "import json,sys; print(json.load(sys.stdin)['samples_per_s'])")
  echo "seed $seed: kiln mean teacher $mt ($mt_rate samples/s), labels alone $alone, PyTorch port $pt ($pt_rate samples/s)" >&2
  echo "$seed $mt $alone $pt $mt_rate $pt_rate" >> "$work/rows"
done
"$python" - "$work/rows" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
med = lambda i: statistics.median(r[i] for r in rows)
print("| seeds | kiln mean teacher | labels alone | PyTorch port | kiln - alone | kiln - port | kiln samples/s | port samples/s | rate ratio |")
print("|---|---|---|---|---|---|---|---|---|")
print(f"| {len(rows)} (medians) | {med(1):.4f} | {med(2):.4f} | {med(3):.4f} | {100 * (med(1) - med(2)):+.1f} pts | "
      f"{100 * (med(1) - med(3)):+.1f} pts | {med(4):.0f} | {med(5):.0f} | {med(4) / med(5):.2f} |")
PY
