#!/usr/bin/env bash
# The statistics pass over a tabular file: `kiln data stats` against pandas (read_csv, describe
# and the population standard deviation) on the same numeric CSV file.
#
#   benchmarks/tabular_stats.sh [ROWS] [RUNS]
#
# The file has 8 float columns of normal noise and a 3-class label (benchmarks write it to a
# temporary folder); the same rows are also converted to tf.Examples and described from TFRecord. Runs alternate kiln / pandas RUNS times. Rates are records per second of
# reading the file and computing every column's statistics: kiln's from its own timing
# (read_seconds: reading, parsing every cell, fitting the config's columns; pass_seconds: the
# statistics pass), pandas's from read_csv to describe; and whole processes, start-up included
# (loading LibTorch for kiln, importing pandas for the peer). Ratios > 1: kiln faster.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
runs=${2:-3}
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" - "$work/numbers.csv" "$rows" <<'PY'
import random, sys
draw = random.Random(3)
with open(sys.argv[1], "w") as out:
    out.write(",".join(f"x{i}" for i in range(8)) + ",label\n")
    for _ in range(int(sys.argv[2])):
        out.write(",".join(f"{draw.gauss(0, 1):.4f}" for _ in range(8)) + f",{draw.randrange(3)}\n")
PY
cat > "$work/numbers.yaml" <<YAML
version: 1
name: numbers
data:
  train: {type: csv, file: $work/numbers.csv, input: [x0, x1, x2, x3, x4, x5, x6, x7], target: label}
  columns: {x0: {type: numeric, normalize: zscore}}
model: {type: sequential, layers: [{type: linear, out: 3}]}
YAML

# The same rows as tf.Examples (one float feature per column), for the TFRecord line: pandas has
# no TFRecord reader, so that line is kiln's alone.
"$kiln" data convert csv "$work/numbers.csv" --out "$work/numbers" > /dev/null
sed -e "s|{type: csv, file: $work/numbers.csv,|{type: tfrecord, files: $work/numbers-*.tfrecord, features: {label: {dtype: int64}},|" \
  "$work/numbers.yaml" > "$work/records.yaml"

now() { date +%s.%N; }
: > "$work/rows.txt"
for i in $(seq "$runs"); do
  begun=$(now)
  "$kiln" data stats "$work/numbers.yaml" --json > "$work/kiln.json"
  kiln_wall=$("$python" -c "print($(now) - $begun)")
  "$python" benchmarks/peers/describe_csv.py "$work/numbers.csv" > "$work/peer.json"
  "$python" - "$work/kiln.json" "$work/peer.json" "$kiln_wall" >> "$work/rows.txt" <<'PY'
import json, sys
kiln, peer = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = kiln["records"]
print(rows / (kiln["read_seconds"] + kiln["pass_seconds"]), rows / kiln["pass_seconds"],
      rows / float(sys.argv[3]), rows / peer["seconds"], rows / peer["seconds_with_import"])
PY
  echo "run $i: $(tail -n1 "$work/rows.txt")" >&2
  "$kiln" data stats "$work/records.yaml" --json |
    "$python" -c "import json,sys; s=json.load(sys.stdin); r=s['records']; print(r / (s['read_seconds'] + s['pass_seconds']), r / s['pass_seconds'])" \
      >> "$work/records.txt"
done
"$python" - "$work/rows.txt" "$rows" <<'PY'
import statistics, sys
runs = [list(map(float, line.split())) for line in open(sys.argv[1])]
k_work, k_pass, k_wall, p_work, p_wall = (statistics.median(r[i] for r in runs) for i in range(5))
print("| records | kiln read + statistics (records/s) | kiln statistics pass alone | pandas read_csv + describe | ratio | kiln process | pandas process | ratio |")
print("|---|---|---|---|---|---|---|---|")
print(f"| {int(sys.argv[2]):,} x 8 floats | {k_work:,.0f} | {k_pass:,.0f} | {p_work:,.0f} | {k_work / p_work:.2f} | {k_wall:,.0f} | {p_wall:,.0f} | {k_wall / p_wall:.2f} |")
PY
"$python" - "$work/records.txt" <<'PY'
import statistics, sys
runs = [list(map(float, line.split())) for line in open(sys.argv[1])]
work, alone = (statistics.median(r[i] for r in runs) for i in range(2))
print(f"\nThe same rows as one TFRecord file of tf.Examples: kiln reads and describes {work:,.0f} records/s; the statistics pass alone {alone:,.0f}.")
PY
