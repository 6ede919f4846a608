#!/usr/bin/env bash
# What optimizing a model for inference is worth: `kiln predict` over the Fashion-MNIST test set
# (10,000 images) with the model optimized (the default) and as loaded (--no-optimize), for
# configs/examples/fashion_mnist/cnn.yaml's CNN as a kiln export (its two batch norms folded into
# the convolutions) and as a TorchScript model scripted by PyTorch from the same weights
# (torch::jit::optimize_for_inference), at batch 1 and 32. Runs alternate RUNS times; the table
# shows median images/s and the ratio optimized / as loaded (> 1: optimizing pays).
#
#   benchmarks/inference_optimize.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}   # Debian's python3-torch lives here, not in a pyenv
images=/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Batch-norm statistics of a short run, so that folding has real numbers to fold.
"$kiln" train configs/examples/fashion_mnist/cnn.yaml --runs-root "$work/runs" --quiet \
  --set "train.max=20 steps" --set data.val_fraction=0 --set train.monitor=train/loss > "$work/train.out"
"$kiln" export "$(sed -n 's/^run: //p' "$work/train.out")" --checkpoint last \
  --to "$work/models" --name fashion_cnn > /dev/null
KILN_EXPORT="$work/models/fashion_cnn/1" "$python" benchmarks/peers/script_cnn.py \
  "$work/models/fashion_cnn_script/1"

# `predicted N examples in S s, R examples/s` on stderr
rate() {
  "$kiln" predict "$1" --input "$images" --batch "$2" --output /dev/null "${@:3}" 2>&1 |
    sed -n 's/^predicted .* s, \([0-9.]*\) examples\/s$/\1/p'
}

source benchmarks/alternate.sh
KILN_LABEL=optimized PEER_LABEL="as loaded"
echo "| model | batch | optimized images/s | as loaded images/s | ratio |"
echo "| --- | --- | --- | --- | --- |"
for model in fashion_cnn fashion_cnn_script; do
  for batch in 1 32; do
    kiln_rate() { rate "$work/models/$model" "$batch"; }
    peer_rate() { rate "$work/models/$model" "$batch" --no-optimize; }
    alternate_runs "$runs" images/s "$work"
    echo "| $model | $batch | $KILN_MEDIAN | $PEER_MEDIAN |" \
      "$(awk -v a="$KILN_MEDIAN" -v b="$PEER_MEDIAN" 'BEGIN {printf "%.2f", a / b}') |"
  done
done
