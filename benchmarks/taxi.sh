#!/usr/bin/env bash
# TFX's Chicago-taxi example (configs/examples/chicago_taxi/taxi_wide_deep.yaml) against
# scikit-learn on the same split: kiln's wide_deep trained from the raw tf.Example records with
# its label derived in the config, once per seed, its checkpoint chosen on the validation carve,
# scored once on the test file (every third trip) by `kiln eval --split test`; that AUC
# recomputed by scikit-learn from `kiln predict`'s probabilities of the test file (the two must
# agree); and scikit-learn's logistic regression and histogram gradient boosting fitted on the
# same training records with the same preparation of the features
# (benchmarks/peers/taxi_sklearn.py).
#
#   benchmarks/taxi.sh [RUNS]      default 3 seeds; the table gives each and their median
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
config=configs/examples/chicago_taxi/taxi_wide_deep.yaml
train=configs/examples/chicago_taxi/taxi_train.tfrecord.gz
test=configs/examples/chicago_taxi/taxi_eval.tfrecord.gz
peer=benchmarks/peers/taxi_sklearn.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { "$python" -c "import json, sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

echo "| model | seed | test AUC | seconds to train |"
echo "|---|---|---|---|"
for seed in $(seq "$runs"); do
  started=$(date +%s.%N)
  "$kiln" train "$config" --runs-root "$work/runs" --set "seed=$seed" --quiet > "$work/train.out" \
    2> "$work/train.err"  # the config's expected warning: pickup_census_tract holds no value
  seconds=$(echo "$(date +%s.%N) - $started" | bc)
  run=$(sed -n 's/^run: //p' "$work/train.out")
  "$kiln" eval "$run" --split test --json 2>/dev/null | head -n1 > "$work/test.json"
  "$kiln" predict "$run" --input "$test" 2>/dev/null > "$work/predicted.jsonl"
  "$python" "$peer" --auc-of "$work/predicted.jsonl" "$test" > "$work/recomputed.json"
  auc=$(field "$work/test.json" '["test/roc_auc"]')
  again=$(field "$work/recomputed.json" '["test_auc"]')
  if "$python" -c "import sys; sys.exit(abs($auc - $again) > 1e-9)"; then :; else
    echo "kiln's test AUC $auc differs from scikit-learn's of its predictions, $again" >&2
    exit 1
  fi
  echo "$auc" >> "$work/kiln.auc"
  printf '| kiln wide_deep | %s | %.4f | %.1f |\n' "$seed" "$auc" "$seconds"
done
"$python" "$peer" "$train" "$test" > "$work/peer.json"
printf '| kiln wide_deep, median of %s | | %.4f | |\n' "$runs" "$(median < "$work/kiln.auc")"
printf '| scikit-learn logistic regression | | %.4f | %.1f |\n' \
  "$(field "$work/peer.json" '["logistic_regression"]["test_auc"]')" \
  "$(field "$work/peer.json" '["logistic_regression"]["seconds"]')"
printf '| scikit-learn histogram gradient boosting | | %.4f | %.1f |\n' \
  "$(field "$work/peer.json" '["gradient_boosting"]["test_auc"]')" \
  "$(field "$work/peer.json" '["gradient_boosting"]["seconds"]')"
echo
echo "kiln's test AUC of each run equals scikit-learn's roc_auc_score of its kiln predict" \
  "probabilities (within 1e-9). Test trips: $(field "$work/peer.json" '["test_rows"]')," \
  "big tippers $(field "$work/peer.json" '["test_big_tipper_share"]')."
