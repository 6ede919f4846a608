#!/usr/bin/env bash
# On the GPU machine (docs/gpu.md): the ResNet recipe (configs/examples/fashion_mnist/
# resnet_gpu.yaml) in its variants side by side, each for as many epochs as fit the time given.
# A one-epoch probe of every variant, run side by side as the real runs will be, measures the
# seconds an epoch takes; each variant then trains a whole cosine schedule of the epochs that fit.
# Validation is on the 5,000 training images the config holds out. Writes summary.txt (each
# variant's epochs, samples/s, final and best accuracy, and its accuracy after every epoch) and
# build.txt to $OUT (or ./gpu-recipe-out), and prints the summary.
#
#   scripts/gpu-recipe.sh [SECONDS]   gives up SECONDS after it began (default 540)
set -uo pipefail

source "$(dirname "$0")/gpu-common.sh"
gpu_begin gpu-recipe "${1:-540}"
gpu_build kiln
config=configs/examples/fashion_mnist/resnet_gpu.yaml
runs=/tmp/kiln-gpu-recipe
rm -rf "$runs"
mkdir -p "$runs/logs"
# NAME and its overrides; the variants share the cores evenly.
variants=("w16:--set model.width=16" "w32:--set model.width=32"
  "w64bf16:--set model.width=64 --set train.precision=bf16")
threads=$(($(nproc) / ${#variants[@]}))

train() {  # train NAME SECONDS ARGS...
  local name="$1" seconds="$2"
  shift 2
  timeout "$seconds" "$kiln" train "$config" --run-dir "$runs/$name" --quiet \
    --set runtime.threads="$threads" "$@" > "$runs/logs/$name.log" 2>&1
  local code=$?
  [ "$code" -eq 0 ] || { note "$name: exit $code"; tail -5 "$runs/logs/$name.log" >> "$summary"; }
}

for variant in "${variants[@]}"; do
  train "probe_${variant%%:*}" 120 ${variant#*:} --set train.max="1 epoch" --set scheduler.warmup="1 step" &
done
wait
margin=20
for variant in "${variants[@]}"; do
  name="${variant%%:*}"
  seconds=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' \
    "$runs/probe_$name/summary.json" 2>/dev/null || echo 0)
  epochs=$(python3 -c 'import sys; s, t = float(sys.argv[1]), int(sys.argv[2]); print(min(80, int(t / s)) if s > 0 else 0)' \
    "$seconds" "$(($(left) - margin))")
  note "$name: probe epoch ${seconds} s, so ${epochs} epochs"
  [ "$epochs" -ge 1 ] && train "$name" "$(($(left) - 5))" ${variant#*:} --set train.max="$epochs epochs" &
done
wait

python3 - "$runs" "${variants[@]}" <<'PY' >> "$summary"
import csv, json, sys
runs = sys.argv[1]
for variant in sys.argv[2:]:
    name = variant.split(":")[0]
    try:
        summary = json.load(open(f"{runs}/{name}/summary.json"))
    except (OSError, ValueError):
        print(f"{name}: no summary"); continue
    final = summary.get("final", {})
    print(f"{name}: final val/accuracy {final.get('val/accuracy')}, best {summary.get('best')},"
          f" samples/s {final.get('train/samples_per_s')}, seconds {summary.get('seconds')}")
    curve = [row["value"][:6] for row in csv.DictReader(open(f"{runs}/{name}/metrics.csv"))
             if row["split"] == "val" and row["metric"] == "accuracy"]
    print(f"  val/accuracy by epoch: {' '.join(curve)}")
PY
note "done at $(($(date +%s) - begun)) s"
for run in "$runs"/*/summary.json; do cp "$run" "$out/$(basename "$(dirname "$run")").json"; done
cat "$summary"
