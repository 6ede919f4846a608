#!/usr/bin/env bash
# What TensorBoard's event files cost a training run: kiln with `tensorboard` at its defaults
# against the same run with `tensorboard: false`.
#
#   benchmarks/tensorboard_cost.sh [STEPS] [RUNS]
#
# Both train configs/examples/fashion_mnist/cnn.yaml as it is (validation every epoch, batch 128,
# all cores) for STEPS steps (default: one epoch, so each run validates and writes its histograms
# once). The rate is samples over the run's whole training time (summary.json: validation and the
# event files included). Runs alternate RUNS times; the table shows the medians and the cost.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-469}
runs=${2:-3}
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rate_with() {
  "$kiln" train configs/examples/fashion_mnist/cnn.yaml --runs-root "$work" --quiet \
    --set "train.max=$steps steps" --set "runtime.threads=$(nproc)" "$@" > "$work/kiln.out"
  local run; run=$(sed -n 's/^run: //p' "$work/kiln.out")
  "$python" -c "import json; s=json.load(open('$run/summary.json')); print(s['samples']/s['seconds'])"
}
kiln_rate() { rate_with; }                          # TensorBoard on (the default)
peer_rate() { rate_with --set tensorboard=false; }  # off

source benchmarks/alternate.sh
KILN_LABEL="with TensorBoard" PEER_LABEL="without"
alternate_runs "$runs" samples/s "$work"
echo "| config | steps | samples/s with TensorBoard | samples/s without | cost |"
echo "|---|---|---|---|---|"
awk -v s="$steps" -v on="$KILN_MEDIAN" -v off="$PEER_MEDIAN" \
  'BEGIN { printf "| fashion_mnist cnn.yaml | %s | %.0f | %.0f | %.1f %% |\n", s, on, off, 100 * (1 - on / off) }'
