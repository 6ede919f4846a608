#!/usr/bin/env bash
# GPU training speed: kiln against the same model trained by PyTorch on the same GPU, eager and
# through torch.compile (benchmarks/peers/gpu_train.py: data on the GPU, fused optimizer, no
# per-step synchronisation). Run on a GPU machine with a CUDA kiln in build-gpu/ (docs/gpu.md).
#
#   benchmarks/gpu.sh [CNN_STEPS] [RESNET_STEPS] [RUNS]
#
# Each row: samples/s after warm-up (kiln: the median of its logged windows after the first; the
# peer: the steps after its warm-up), peak GPU memory (torch.cuda.max_memory_allocated and kiln's
# system/cuda_peak_allocated_mb count the same allocator), and the GPU's utilisation (the mean
# of nvidia-smi's samples every 100 ms from the first busy one to the last). With RUNS > 1 each row is the median of RUNS
# runs. ROWS=FILE keeps the rows as they are measured; ROWS_MATCHING=REGEX measures only the rows
# whose label matches (scripts/gpu-device.sh, short of time, takes kiln's and eager's float32). Prints a Markdown table; the ratios are
# kiln over each peer (> 1: kiln faster).
set -uo pipefail
cd "$(dirname "$0")/.."
cnn_steps=${1:-2000}
resnet_steps=${2:-1000}
runs=${3:-1}
kiln=${KILN:-build-gpu/kiln}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# utilisation_during COMMAND...: runs it while nvidia-smi samples the GPU every 100 ms; prints
# the command's output, then "utilisation N" (median %).
utilisation_during() {
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 100 \
    > "$work/smi.txt" 2>/dev/null &
  local smi=$!
  "$@"
  local code=$?
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
  # The mean from the first busy sample to the last: start-up (loading Python, the data) is idle.
  awk '{v[NR] = $1} $1 > 0 {if (!first) first = NR; last = NR}
       END {for (i = first; first && i <= last; ++i) sum += v[i];
            print "utilisation", first ? sum / (last - first + 1) : 0}' "$work/smi.txt"
  return $code
}

# kiln_run CONFIG STEPS [--set ...]: one line "samples_per_s peak_mb".
kiln_run() {
  local config=$1 steps=$2
  shift 2
  rm -rf "$work/run"
  "$kiln" train "$config" --run-dir "$work/run" --quiet --set "runtime.device=${KILN_DEVICE:-cuda}" \
    --set "train.max=$steps steps" --set data.val_fraction=0 --set data.test=null \
    --set train.monitor=train/loss --set train.mode=min \
    --set "train.log_every=$((steps / 8)) steps" "$@" > "$work/kiln.log" 2>&1 ||
    { tail -5 "$work/kiln.log" >&2; echo "failed failed"; return 1; }
  "$python" - "$work/run/metrics.csv" <<'PY'
import csv, statistics, sys
rates, peak = [], "n/a"
for row in csv.DictReader(open(sys.argv[1])):
    name = row["split"] + "/" + row["metric"]
    if name == "train/samples_per_s":
        rates.append(float(row["value"]))
    elif name.endswith("cuda_peak_allocated_mb"):
        peak = "%.0f" % float(row["value"])
print("%.0f" % statistics.median(rates[1:] or rates), peak)
PY
}

# peer_run MODEL STEPS [ARGS...]: one line "samples_per_s peak_mb".
peer_run() {
  local model=$1 steps=$2
  shift 2
  "$python" benchmarks/peers/gpu_train.py --model "$model" --steps "$steps" --warmup 200 "$@" \
    > "$work/peer.json" 2> "$work/peer.log" ||
    { tail -5 "$work/peer.log" >&2; echo "failed failed"; return 1; }
  "$python" -c "import json,sys; r=json.load(open(sys.argv[1])); print('%.0f %.0f' % (r['samples_per_s'], r['peak_mb']))" "$work/peer.json"
}

# row LABEL KIND ARGS...: RUNS measurements, the median of each column.
row() {
  local label=$1
  shift
  [[ "$label" =~ ${ROWS_MATCHING:-.} ]] || return 0
  : > "$work/row.txt"
  for _ in $(seq "$runs"); do
    utilisation_during "$@" | tr '\n' ' ' >> "$work/row.txt"
    echo >> "$work/row.txt"
  done
  "$python" - "$label" "$work/row.txt" <<'PY'
import statistics, sys
label, lines = sys.argv[1], [l.split() for l in open(sys.argv[2]) if l.strip()]
def median(i):
    values = [float(l[i]) for l in lines if len(l) > i and l[i].replace(".", "").isdigit()]
    return "%.0f" % statistics.median(values) if values else "failed"
print("%s|%s|%s|%s" % (label, median(0), median(1), median(3)))
PY
}

cnn=configs/examples/fashion_mnist/cnn.yaml
resnet=configs/examples/fashion_mnist/resnet.yaml
{
  # kiln first, then the eager peer, then torch.compile (whose compiling takes the longest).
  # Data on the GPU, as the peer has it (data.cache: device); then read from host memory.
  row "CNN fp32, kiln" kiln_run "$cnn" "$cnn_steps" --set data.cache=device
  row "CNN fp32, kiln, data from host memory" kiln_run "$cnn" "$cnn_steps"
  row "CNN fp32, kiln, pin_memory off" kiln_run "$cnn" "$cnn_steps" --set runtime.pin_memory=false
  row "CNN fp32, kiln, channels_last" kiln_run "$cnn" "$cnn_steps" --set data.cache=device \
    --set runtime.channels_last=true
  row "CNN bf16, kiln" kiln_run "$cnn" "$cnn_steps" --set data.cache=device \
    --set train.precision=bf16
  row "ResNet-20 fp32, kiln" kiln_run "$resnet" "$resnet_steps" --set data.cache=device
  row "ResNet-20 fp32, kiln, data from host memory" kiln_run "$resnet" "$resnet_steps"
  row "ResNet-20 fp32, kiln, channels_last" kiln_run "$resnet" "$resnet_steps" \
    --set data.cache=device --set runtime.channels_last=true
  row "CNN fp32, PyTorch eager" peer_run cnn "$cnn_steps"
  row "CNN bf16, PyTorch eager" peer_run cnn "$cnn_steps" --precision bf16
  row "ResNet-20 fp32, PyTorch eager" peer_run resnet "$resnet_steps"
  row "CNN fp32, PyTorch eager, channels_last" peer_run cnn "$cnn_steps" --channels-last
  row "CNN fp32, torch.compile" peer_run cnn "$cnn_steps" --mode compile
  row "ResNet-20 fp32, torch.compile" peer_run resnet "$resnet_steps" --mode compile
} > "${ROWS:-$work/rows.txt}"

echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $("$python" -c 'import torch; print("PyTorch", torch.__version__)'), batch 128, $runs run(s) each"
echo
echo "| run | samples/s | peak GPU MiB | GPU utilisation % | kiln / PyTorch eager | kiln / torch.compile |"
echo "|---|---|---|---|---|---|"
"$python" - "${ROWS:-$work/rows.txt}" <<'PY'
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1]) if "|" in l]
rate = {r[0]: r[1] for r in rows}
def ratio(kiln, peer):
    try:
        return "%.2f" % (float(rate[kiln]) / float(rate[peer]))
    except (KeyError, ValueError, ZeroDivisionError):
        return ""
for label, samples, peak, utilisation in rows:
    model, _, who = label.partition(", ")
    eager = compiled = ""
    if who.startswith("kiln"):
        eager = ratio(label, model + ", PyTorch eager")
        compiled = ratio(label, model + ", torch.compile")
    print("| %s | %s | %s | %s | %s | %s |" % (label, samples, peak, utilisation, eager, compiled))
PY
