#!/usr/bin/env bash
# Evaluation throughput: `kiln eval` against the same model as a plain PyTorch evaluation loop.
#
#   benchmarks/eval_throughput.sh [RUNS] [BATCH]
#
# Both evaluate configs/examples/fashion_mnist/cnn.yaml's CNN on the Fashion-MNIST test set
# (10,000 images): normalisation, forward pass in eval mode without gradients, loss and accuracy,
# batch BATCH (the config's eval_batch_size, 1000), all cores. kiln evaluates a checkpoint of a
# one-step run made first; both time the evaluation loop only, start-up and reading the data
# excluded. Runs alternate RUNS times; the table shows the median images/s of each and their
# ratio (> 1: kiln faster).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
batch=${2:-1000}
threads=$(nproc)
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}   # Debian's python3-torch lives here, not in a pyenv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$kiln" train configs/examples/fashion_mnist/cnn.yaml --runs-root "$work" \
  --set "train.max=1 step" --set data.val_fraction=0 --set train.monitor=train/loss \
  --set "data.eval_batch_size=$batch" --set "runtime.threads=$threads" > "$work/train.out"
run=$(sed -n 's/^run: //p' "$work/train.out")

kiln_rate() {
  # `test: N examples in S s, R examples/s` on stderr
  "$kiln" eval "$run" --split test 2>&1 >/dev/null | sed -n 's/^test: .*, \([0-9.]*\) examples\/s$/\1/p'
}

peer_rate() {
  "$python" benchmarks/peers/eval_cnn.py --batch "$batch" --threads "$threads" |
    "$python" -c "import json,sys; print(json.load(sys.stdin)['examples_per_s'])"
}

source benchmarks/alternate.sh
alternate_runs "$runs" images/s "$work"
k=$KILN_MEDIAN; p=$PEER_MEDIAN
echo "| model | split x batch | threads | kiln images/s | PyTorch images/s | ratio kiln/PyTorch |"
echo "|---|---|---|---|---|---|"
awk -v b="$batch" -v t="$threads" -v k="$k" -v p="$p" \
  'BEGIN { printf "| fashion_mnist cnn.yaml | test (10000) x %s | %s | %.0f | %.0f | %.2f |\n", b, t, k, p, k / p }'
