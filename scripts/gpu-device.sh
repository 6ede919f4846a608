#!/usr/bin/env bash
# The device checks (docs/gpu.md) in one call of a GPU machine of under ten minutes, the build
# included, for a session that is lent one:
#   1. kiln and torch_tests built into build-gpu by scripts/gpu-build.sh, from the project's one
#      package list;
#   2. the suite's CUDA tests (device feed, checkpoints across devices, fp16 and bf16), and the
#      tests of a step that reads nothing back, run on the GPU (their configs' device: auto);
#   3. the ResNet recipe (configs/examples/fashion_mnist/resnet_gpu.yaml) alone on the GPU: the
#      wall time from launch to its last checkpoint, and the test accuracy of the checkpoint that
#      was best on the validation images it holds out of the training set;
#   4. benchmarks/gpu.sh's float32 rows of kiln and PyTorch eager, in the time that is left.
# Writes summary.txt, the recipe's metrics.csv and the logs of what failed to $OUT (or
# ./gpu-device-out), and prints the summary.
#
#   scripts/gpu-device.sh [SECONDS]   gives up SECONDS after it began (default 560)
set -uo pipefail

source "$(dirname "$0")/gpu-common.sh"
gpu_begin gpu-device "${1:-560}"
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)'
} >> "$summary" 2>&1
gpu_build kiln torch_tests
[ -x "$kiln" ] || { tail -30 "$out/build.txt"; cat "$summary"; exit 1; }

cuda_tests='DeviceFeed.*:CheckpointTest.*Cuda*:Precision.*:LossScal*:TrainingStepReads.*:ResidentDataset.*:MetricDeviceReads.*'
timeout 120 build-gpu/torch_tests --gtest_filter="$cuda_tests" > "$out/cuda_tests.txt" 2>&1
code=$?
note "CUDA tests ($cuda_tests): exit $code," \
  "$(grep -c '^\[       OK' "$out/cuda_tests.txt") passed," \
  "$(grep -cE '^\[  SKIPPED \] .*\([0-9]+ ms\)$' "$out/cuda_tests.txt") skipped, at $(($(date +%s) - begun)) s"
grep '^\[  FAILED  \].*\.' "$out/cuda_tests.txt" | sort -u >> "$summary"
[ "$code" -ne 0 ] || rm "$out/cuda_tests.txt"

recipe=/tmp/kiln-gpu-device/recipe
rm -rf "$recipe"
launched=$(date +%s)
timeout "$(($(left) - 75))" "$kiln" train configs/examples/fashion_mnist/resnet_gpu.yaml \
  --run-dir "$recipe" --quiet > "$out/recipe.log" 2>&1
code=$?
trained=$(($(date +%s) - launched))
"$kiln" eval "$recipe" --checkpoint best --split test --json > "$out/recipe_test.json" 2>> "$out/recipe.log"
note "recipe: exit $code, ${trained} s from launch to the end of training;" \
  "$(python3 - "$recipe" "$out/recipe_test.json" <<'PY' 2>&1
import csv, json, sys
run, test = sys.argv[1], sys.argv[2]
summary = json.load(open(f"{run}/summary.json"))
curve = [row["value"][:6] for row in csv.DictReader(open(f"{run}/metrics.csv"))
         if row["split"] == "val" and row["metric"] == "accuracy"]
print(f"{len(curve)} epochs, best val/accuracy {summary.get('best')},"
      f" samples/s {summary['final'].get('train/samples_per_s')};"
      f" test/accuracy of checkpoints/best {json.load(open(test)).get('test/accuracy')}")
print("  val/accuracy by epoch:", " ".join(curve))
PY
)"
cp "$recipe/metrics.csv" "$out/recipe_metrics.csv" 2>/dev/null
[ "$code" -ne 0 ] || rm "$out/recipe.log"

ROWS_MATCHING='^(CNN|ResNet-20) fp32, (kiln|PyTorch eager)$' KILN="$kiln" \
  timeout "$(($(left) - 5))" benchmarks/gpu.sh 1000 500 1 > "$out/benchmark.txt" 2>&1
note "benchmarks/gpu.sh 1000 500 (kiln and eager, float32): exit $? at $(($(date +%s) - begun)) s"
cat "$out/benchmark.txt" >> "$summary"
note "done at $(($(date +%s) - begun)) s"
cat "$summary"
