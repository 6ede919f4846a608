#!/usr/bin/env bash
# How fast `kiln board` lists a large root and opens a long run: RUNS_COUNT run folders (copies of
# one real run of the MLP example, learning rates varied), one of them with a metrics.csv of
# ROWS rows (its tags repeated over ROWS / tags steps). Prints the median time of REPEATS answers
# of the board's API (the runs table; the long run's metrics, thinned to 1,000 points per tag as
# the page asks), and of the page itself in headless chromium: from its script's start to the
# runs table drawn and to the long run's charts drawn (the page logs both to the console). There
# is no peer; the figure to meet is under a second for each.
#
#   benchmarks/board_scale.sh [RUNS_COUNT] [ROWS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2000}
rows=${2:-1000000}
repeats=${3:-5}
kiln=${KILN:-build/kiln}
work=$(mktemp -d)
board_pid=
trap '[ -n "$board_pid" ] && kill "$board_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

"$kiln" train configs/examples/fashion_mnist/mlp.yaml --runs-root "$work/seed" --quiet \
  --set "train.max=20 steps" --set "train.validate_every=10 steps" > "$work/seed.out"
template=$(sed -n 's/^run: //p' "$work/seed.out")
for i in $(seq "$count"); do
  run="$work/runs/exp$((i % 7))/2026$(printf '%06d' "$i")"
  mkdir -p "$run"
  cp "$template/run.json" "$template/config.yaml" "$template/summary.json" \
    "$template/metrics.csv" "$run/"
  sed -i "s/lr: .*/lr: 0.00$((i % 9 + 1))/" "$run/config.yaml"
done
long="exp1/2026$(printf '%06d' 1)"
# The template's last step's rows, again at every step until there are `rows` of them.
awk -v rows="$rows" -F, 'NR == 1 { print; next } { step = $1; line[NR] = $0; last = step }
  END { n = 0; for (i = 2; i <= NR; ++i) if (split(line[i], f, ",") && f[1] == last) tag[++n] = line[i]
        for (r = 0; r < rows; ++r) { split(tag[r % n + 1], f, ","); s = int(r / n) + 1
          printf "%d,%s,%s,%s,%.6g,%.3f\n", s, s / 1000, f[3], f[4], f[5] * (1 + sin(r) / 10), f[6] + s } }' \
  "$template/metrics.csv" > "$work/runs/$long/metrics.csv"

"$kiln" board "$work/runs" --port 0 > "$work/board.out" 2>&1 &
board_pid=$!
until grep -q "^kiln board: http" "$work/board.out"; do sleep 0.1; done
url=$(sed -n 's/^kiln board: \(http[^ ]*\) over .*/\1/p' "$work/board.out")

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
api_time() {
  for _ in $(seq "$repeats"); do curl -s -o /dev/null -w '%{time_total}\n' "$url$1"; done | median
}
runs_s=$(api_time "api/runs")
metrics_s=$(api_time "api/metrics?run=${long/\//%2F}&from=0&points=1000")
answer_rows=$(curl -s "${url}api/metrics?run=${long/\//%2F}&from=0&points=1000" | grep -o '\],\[' | wc -l)

# The page: chromium logs the page's console lines; it stays up (a debugging port) until killed.
page_times() {
  local log="$work/chromium.log"
  timeout 20 chromium --headless --no-sandbox --disable-gpu --window-size=1400,900 \
    --enable-logging=stderr --v=0 --remote-debugging-port=0 "$url#run=${long/\//%2F}" \
    > "$log" 2>&1 &
  local browser=$!
  for _ in $(seq 150); do
    grep -q "charts drawn" "$log" && grep -q "runs listed" "$log" && break
    sleep 0.1
  done
  kill "$browser" 2>/dev/null || true
  wait "$browser" 2>/dev/null || true
  local start listed drawn
  start=$(sed -n 's/.*script started \([0-9]*\) ms.*/\1/p' "$log")
  listed=$(sed -n 's/.*runs listed \([0-9]*\) ms.*/\1/p' "$log")
  drawn=$(sed -n 's/.*charts drawn \([0-9]*\) ms.*/\1/p' "$log")
  echo "$((listed - start)) $((drawn - start))"
}
: > "$work/page.txt"
for _ in $(seq "$repeats"); do page_times >> "$work/page.txt"; done
listed_ms=$(cut -d' ' -f1 "$work/page.txt" | median)
drawn_ms=$(cut -d' ' -f2 "$work/page.txt" | median)

echo "| runs | rows of the long run | /api/runs s | /api/metrics s (rows sent) | page: table drawn ms | page: charts drawn ms |"
echo "|---|---|---|---|---|---|"
echo "| $count | $rows | $runs_s | $metrics_s ($((answer_rows + 1))) | $listed_ms | $drawn_ms |"
