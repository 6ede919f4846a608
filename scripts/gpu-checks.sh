#!/usr/bin/env bash
# On the GPU machine (docs/gpu.md), after or instead of scripts/gpu-test.sh: the checks of CUDA
# training that the test suite does not make, on the CNN example and Fashion-MNIST:
#   - fp16 (with its loss scale) and bf16 train to within 0.005 of float32's accuracy (the final
#     validation, which in this example is on the 10,000 test images);
#   - train.deterministic repeats bitwise on CUDA (two runs, the same weights file);
#   - a checkpoint written on CUDA resumes on the CPU, and one written on the CPU on CUDA.
# Builds into build-gpu first when it holds no kiln. Writes summary.txt (with the end of every
# failed run's log) and build.txt to $OUT (or ./gpu-checks-out), few files as the device tool
# brings back only a few, and prints the summary.
#
#   scripts/gpu-checks.sh [SECONDS]   gives up SECONDS after it began (default 540)
set -uo pipefail

source "$(dirname "$0")/gpu-common.sh"
gpu_begin gpu-checks "${1:-540}"
gpu_build
runs=/tmp/kiln-gpu-runs
logs="$runs/logs"
rm -rf "$runs"
mkdir -p "$logs"
cnn=configs/examples/fashion_mnist/cnn.yaml

# report WHAT CODE: its exit code, and the end of its log when it failed.
report() {
  echo "$1: exit $2" >> "$summary"
  [ "$2" -eq 0 ] || tail -5 "$logs/${1%% *}.log" | sed 's/^/    /' >> "$summary"
}

# train NAME [ARGS...]: the CNN example into $runs/NAME, four threads each so that runs side by
# side share the cores.
train() {
  local name="$1"
  shift
  timeout "$(left)" "$kiln" train "$cnn" --run-dir "$runs/$name" --quiet \
    --set runtime.threads=4 "$@" > "$logs/$name.log" 2>&1
  report "$name" $?
}
resume() {
  local name="$1"
  shift
  timeout "$(left)" "$kiln" train --resume "$runs/$name" --quiet "$@" >> "$logs/$name.log" 2>&1
  report "$name resumed" $?
}
final() {  # final KEY of a run's summary.json
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["final"].get(sys.argv[2]))' \
    "$runs/$1/summary.json" "$2" 2>/dev/null
}

# Precision: the whole example (8 epochs) three times, side by side.
train fp32 &
train fp16 --set train.precision=fp16 &
train bf16 --set train.precision=bf16 &
# Determinism: one epoch twice.
train determinism_a --set train.deterministic=true --set train.max="1 epoch" &
train determinism_b --set train.deterministic=true --set train.max="1 epoch" &
# Portability: 200 steps on one device, then 100 more on the other.
(train cuda_then_cpu --set runtime.device=cuda --set train.max="200 steps" &&
  resume cuda_then_cpu --set runtime.device=cpu --set train.max="300 steps") &
(train cpu_then_cuda --set runtime.device=cpu --set train.max="200 steps" &&
  resume cpu_then_cuda --set runtime.device=cuda --set train.max="300 steps") &
wait

for name in fp32 fp16 bf16; do
  note "$name: val/accuracy $(final $name val/accuracy)," \
    "samples/s $(final $name train/samples_per_s), seconds $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$runs/$name/summary.json" 2>/dev/null)"
done
python3 - "$runs" <<'PY' >> "$summary"
import json, sys
runs = sys.argv[1]
def accuracy(name):
    try:
        return json.load(open(f"{runs}/{name}/summary.json"))["final"]["val/accuracy"]
    except (OSError, KeyError, ValueError):
        return None
fp32 = accuracy("fp32")
for name in ("fp16", "bf16"):
    other = accuracy(name)
    if fp32 is None or other is None:
        print(f"{name}: no accuracy to compare")
    else:
        verdict = "within" if abs(other - fp32) <= 0.005 else "NOT within"
        print(f"{name}: {other:.4f} against float32's {fp32:.4f}: {verdict} 0.005")
PY
a=$(find "$runs/determinism_a/checkpoints" -name '*.safetensors' | sort | tail -1)
b=$(find "$runs/determinism_b/checkpoints" -name '*.safetensors' | sort | tail -1)
if [ -n "$a" ] && [ -n "$b" ] && cmp -s "$a" "$b"; then
  note "deterministic: the two runs' last weights are bitwise equal ($(basename "$(dirname "$a")"))"
else
  note "deterministic: the two runs' last weights DIFFER or are missing ($a, $b)"
fi
for name in cuda_then_cpu cpu_then_cuda; do
  note "$name: steps $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' "$runs/$name/summary.json" 2>/dev/null)," \
    "train/loss $(final $name train/loss), resumed $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("resumed"))' "$runs/$name/run.json" 2>/dev/null)"
done
note "done at $(($(date +%s) - begun)) s"
cat "$summary"
