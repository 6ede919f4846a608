#!/usr/bin/env bash
# How long `kiln runs` takes to list a large tree: RUNS_COUNT generated run folders, each a copy
# of one real run of the MLP example (its run.json, config.yaml, summary.json, notes and a
# metrics.csv of 5000 rows), every tenth still running (no summary: values from metrics.csv) and
# every fiftieth damaged (run.json cut short). Prints the median of REPEATS listings.
#
#   benchmarks/runs_list.sh [RUNS_COUNT] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000}
repeats=${2:-5}
kiln=${KILN:-build/kiln}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$kiln" train configs/examples/fashion_mnist/mlp.yaml --runs-root "$work/seed" --quiet \
  --set "train.max=20 steps" --set "train.validate_every=10 steps" > "$work/seed.out"
template=$(sed -n 's/^run: //p' "$work/seed.out")
awk 'NR == 1 { print; next } { last = $0 } END { for (i = 1; i <= 5000; ++i) {
  split(last, f, ","); printf "%d,%s,%s,%s,%s,%s\n", i, f[2], f[3], f[4], f[5], f[6] } }' \
  "$template/metrics.csv" > "$work/metrics.csv"
for i in $(seq "$count"); do
  run="$work/runs/exp$((i % 7))/2026$(printf '%06d' "$i")"
  mkdir -p "$run"
  cp "$template/run.json" "$template/config.yaml" "$run/"
  cp "$work/metrics.csv" "$run/metrics.csv"
  sed -i "s/lr: .*/lr: 0.00$((i % 9 + 1))/" "$run/config.yaml"
  if (( i % 10 != 0 )); then cp "$template/summary.json" "$run/"; fi
  if (( i % 50 == 0 )); then head -c 40 "$template/run.json" > "$run/run.json"; fi
done

times=()
for _ in $(seq "$repeats"); do
  start=$(date +%s.%N)
  "$kiln" runs "$work/runs" > "$work/table.txt"
  times+=("$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')")
done
rows=$(($(grep -c . "$work/table.txt") - 1))
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "| runs | table lines | median seconds ($repeats listings) |"
echo "|---|---|---|"
echo "| $count | $rows | $median |"
