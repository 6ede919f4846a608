#!/usr/bin/env bash
# Training throughput: kiln against the same model as a plain PyTorch Python loop.
#
#   benchmarks/train_throughput.sh [STEPS] [RUNS] [plain|engine]
#
# Both train configs/examples/fashion_mnist/cnn.yaml's CNN on Fashion-MNIST: same data, batch 128,
# AdamW, same number of steps and threads (all cores), no validation. `engine` adds to both a
# cosine schedule, clipping by global norm and an EMA of the weights. Runs alternate kiln / PyTorch
# RUNS times and the table shows the median samples/s of each and their ratio (> 1: kiln faster).
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-469}   # one epoch
runs=${2:-3}
variant=${3:-plain}
case "$variant" in
  plain) kiln_extra=(); peer_extra=() ;;
  engine)
    kiln_extra=(--set scheduler=cosine --set train.clip_norm=1.0
                --set 'callbacks=[{type: ema, decay: 0.999, warmup: false}]')
    peer_extra=(--engine) ;;
  *) echo "usage: $0 [STEPS] [RUNS] [plain|engine]" >&2; exit 2 ;;
esac
threads=$(nproc)
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}   # Debian's python3-torch lives here, not in a pyenv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

kiln_rate() {
  "$kiln" train configs/examples/fashion_mnist/cnn.yaml --runs-root "$work" \
    --set "train.max=$steps steps" --set data.val_fraction=0 --set train.monitor=train/loss \
    --set train.mode=min --set "runtime.threads=$threads" \
    --set "train.log_every=100000 steps" "${kiln_extra[@]}" > "$work/kiln.out"
  local run; run=$(sed -n 's/^run: //p' "$work/kiln.out")
  "$python" -c "import json,sys; s=json.load(open('$run/summary.json')); print(s['samples']/s['seconds'])"
}

peer_rate() {
  "$python" benchmarks/peers/train_cnn.py --steps "$steps" --threads "$threads" "${peer_extra[@]}" |
    "$python" -c "import json,sys; r=json.load(sys.stdin); print(r['samples']/r['seconds'])"
}

source benchmarks/alternate.sh
alternate_runs "$runs" samples/s "$work"
k=$KILN_MEDIAN; p=$PEER_MEDIAN
echo "| model | steps x batch | threads | kiln samples/s | PyTorch samples/s | ratio kiln/PyTorch |"
echo "|---|---|---|---|---|---|"
awk -v s="$steps" -v t="$threads" -v k="$k" -v p="$p" \
  -v v="$variant" \
  'BEGIN { printf "| fashion_mnist cnn.yaml, %s | %s x 128 | %s | %.0f | %.0f | %.2f |\n", v, s, t, k, p, k / p }'
