#!/usr/bin/env bash
# Input pipeline throughput: kiln's loader against a PyTorch DataLoader doing the same work.
#
#   benchmarks/pipeline.sh [WORKERS] [RUNS] [EPOCHS]
#
# Both read the Fashion-MNIST training set as 4 gzip TFRecord shards of tf.Example (written once
# by `kiln data convert idx`), hold the serialized records in memory, and then per epoch decode
# image and label, scale to [0, 1], random_crop 28 with padding 2, random_flip, normalize, shuffle
# and batch 128, on WORKERS worker threads (kiln) or processes (PyTorch). Runs alternate RUNS
# times; the table shows the median images/s of each and the ratio (> 1: kiln faster).
#
# The peer is benchmarks/peers/pipeline_strong.py: tf.Example parsed by protobuf's C++
# implementation, one whole batch per worker task, the augmentation vectorised over the batch.
# PEER=plain compares with benchmarks/peers/pipeline_dataloader.py instead (a DataLoader of
# examples, as most code writes it).
set -euo pipefail
cd "$(dirname "$0")/.."
workers=${1:-2}
runs=${2:-3}
epochs=${3:-2}
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}   # Debian's python3-torch lives here, not in a pyenv
fashion=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$kiln" data convert idx --out "$work/train" --shards 4 --compression gzip \
  --images "$fashion/train-images-idx3-ubyte.gz" \
  --labels "$fashion/train-labels-idx1-ubyte.gz" > /dev/null
files="$work/train-*.tfrecord.gz"

kiln_rate() {
  "$kiln" data bench configs/examples/fashion_mnist/cnn_tfrecord.yaml benchmarks/pipeline.yaml \
    --set "data.train.files=$files" --set "data.workers=$workers" --set data.val_fraction=0 \
    --epochs "$epochs" --json |
    "$python" -c "import json,sys; print(json.load(sys.stdin)['examples_per_s'])"
}

peer_script=benchmarks/peers/pipeline_strong.py
peer_name="strong PyTorch DataLoader"
if [ "${PEER:-strong}" = plain ]; then
  peer_script=benchmarks/peers/pipeline_dataloader.py
  peer_name="PyTorch DataLoader of examples"
fi

peer_rate() {
  "$python" "$peer_script" --files "$files" --workers "$workers" \
    --epochs "$epochs" | "$python" -c "import json,sys; print(json.load(sys.stdin)['examples_per_s'])"
}

source benchmarks/alternate.sh
alternate_runs "$runs" images/s "$work"
k=$KILN_MEDIAN; p=$PEER_MEDIAN
echo "| pipeline | workers | epochs | kiln images/s | $peer_name images/s | ratio kiln/PyTorch |"
echo "|---|---|---|---|---|---|"
awk -v w="$workers" -v e="$epochs" -v k="$k" -v p="$p" \
  'BEGIN { printf "| TFRecord gzip -> decode, random_crop, random_flip, normalize, batch 128 | %s | %s | %.0f | %.0f | %.2f |\n", w, e, k, p, k / p }'
