#!/usr/bin/env bash
# Data-parallel training: `kiln launch --nproc 2` against PyTorch DDP in Python under torchrun
# (scripts/torchrun, Debian's repaired), 2 processes of 1 thread each; and each against itself
# as one process of 1 thread, for the scaling.
#
#   benchmarks/ddp.sh [STEPS] [RUNS]      default: 200 3
#
# Both train configs/examples/fashion_mnist/cnn.yaml's CNN on Fashion-MNIST: same data, global
# batch 128 (64 per rank), AdamW, same number of steps, no validation, Gloo over loopback. The
# rates are the job's samples/s over the training loop (kiln: summary.json; PyTorch: between
# barriers). Runs alternate RUNS times; the table shows medians and ratios, and below it the share
# of kiln's step time spent exchanging gradients (train/time/communication, logged every 50 steps).
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-200}
runs=${2:-3}
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$((29700 + RANDOM % 200))

# One kiln job: "launch" (2 ranks) or "alone" (1 process), 1 thread per process.
kiln_job() {
  local how=$1 command=(train configs/examples/fashion_mnist/cnn.yaml --runs-root "$work/runs"
    --set "train.max=$steps steps" --set data.val_fraction=0 --set train.monitor=train/loss
    --set train.mode=min --set runtime.threads=1 --set "train.log_every=50 steps")
  if [ "$how" = launch ]; then
    "$kiln" launch --nproc 2 -- "${command[@]}" > "$work/kiln.out"
  else
    "$kiln" "${command[@]}" > "$work/kiln.out"
  fi
  local run; run=$(sed -n 's/^\(\[rank 0\] \)\{0,1\}run: //p' "$work/kiln.out" | head -n1)
  # The share of training time rank 0 spent exchanging gradients, over its log windows.
  [ "$how" = launch ] && awk -F, '$3 == "train" && $4 == "time/communication" {s += $5; n++}
    END {if (n) print s / n}' "$run/metrics.csv" >> "$work/communication"
  "$python" -c "import json; s=json.load(open('$run/summary.json')); print(s['samples']/s['seconds'])"
}

peer_job() {
  local how=$1 rate
  if [ "$how" = launch ]; then
    port=$((port + 1))
    (cd benchmarks/peers && OMP_NUM_THREADS=1 "$python" ../../scripts/torchrun --nproc_per_node 2 \
      --master_port "$port" train_cnn_ddp.py --steps "$steps" --threads 1 2> "$work/peer.err")
  else
    "$python" benchmarks/peers/train_cnn.py --steps "$steps" --threads 1
  fi | "$python" -c "import json,sys; r=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(r['samples']/r['seconds'])"
}

source benchmarks/alternate.sh
table=()
for how in launch alone; do
  kiln_rate() { kiln_job "$how"; }
  peer_rate() { peer_job "$how"; }
  KILN_LABEL="kiln $how" PEER_LABEL="pytorch $how" alternate_runs "$runs" samples/s "$work"
  table+=("$how $KILN_MEDIAN $PEER_MEDIAN")
done
echo "| processes x threads | kiln samples/s | PyTorch samples/s | ratio kiln/PyTorch |"
echo "|---|---|---|---|"
for row in "${table[@]}"; do
  set -- $row
  awk -v h="$1" -v k="$2" -v p="$3" 'BEGIN { printf "| %s | %.0f | %.0f | %.2f |\n",
    (h == "launch" ? "2 x 1 (kiln launch / DDP under torchrun)" : "1 x 1"), k, p, k / p }'
done
set -- ${table[0]}; launch_k=$2 launch_p=$3
set -- ${table[1]}
awk -v lk="$launch_k" -v lp="$launch_p" -v ak="$2" -v ap="$3" \
  'BEGIN { printf "\nscaling, 2 ranks over 1: kiln %.2fx, PyTorch %.2fx\n", lk / ak, lp / ap }'
printf "kiln's share of step time exchanging gradients at 2 ranks (median of runs): %.1f%%\n" \
  "$(median < "$work/communication" | awk '{print $1 * 100}')"
