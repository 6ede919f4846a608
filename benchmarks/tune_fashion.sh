#!/usr/bin/env bash
# Hyper-parameter search on a real objective: the Fashion-MNIST MLP's validation accuracy (a tenth
# of the training set held out) over learning rate, weight decay, first width and batch size
# (configs/examples/fashion_mnist/mlp_tune.yaml), short trainings. Per seed, three studies of
# TRIALS trials each, every trial an ordinary `kiln train` of the same config:
#   kiln tpe          kiln tune, no pruning;
#   optuna tpe        Optuna 3.1's TPESampler (8 startup trials, as kiln's here) choosing the
#                     same parameters (benchmarks/peers/tune_fashion_optuna.py);
#   kiln tpe + asha   kiln tune with the config's ASHA (validated every half epoch, rungs at 0.5
#                     and 1.5 epochs; a third go on at each).
# Prints the median best accuracy after TRIALS and TRIALS/2 trials, and the epochs trained (each
# trial's last validation, summed), and whether ASHA came within 0.5 % of the unpruned best with at
# most half the epochs.
#
#   benchmarks/tune_fashion.sh [TRIALS] [SEEDS] [--set K=V ...]   default: 20 3
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-20}
seeds=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
sets=("$@")
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
config=configs/examples/fashion_mnist/mlp_tune.yaml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ -x "$kiln" ] || { echo "tune_fashion.sh: no kiln binary at $kiln: build it first" >&2; exit 1; }
echo "\$ benchmarks/tune_fashion.sh $trials $seeds ${sets[*]}"

set_args=("${sets[@]}")   # --set K=V ..., for every trial of every study
for seed in $(seq 1 "$seeds"); do
  for pruner in none asha; do
    # The asha study keeps the config's pruner (its rungs and reduction); none turns it off.
    pruning=()
    [ "$pruner" = none ] && pruning=(--set tune.pruner=none)
    "$kiln" tune "$config" --runs-root "$out/kiln" --study "$pruner-$seed" --set "tune.seed=$seed" \
      --set "tune.trials=$trials" "${pruning[@]}" "${set_args[@]}" > /dev/null
    echo -n . >&2
  done
  "$python" benchmarks/peers/tune_fashion_optuna.py --kiln "$kiln" --config "$config" \
    --trials "$trials" --seed "$seed" --out "$out/optuna-$seed" "${set_args[@]}" \
    > "$out/optuna-$seed.json"
  echo -n . >&2
done
echo >&2

"$python" - "$out" "$trials" "$seeds" <<'PY'
import json, sqlite3, statistics, sys
out, trials, seeds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
half = max(1, trials // 2)
def kiln_study(name):
    db = sqlite3.connect(f"{out}/kiln/fashion_mlp_tune/{name}/study.db")
    rows = db.execute("select number, value from trials where value is not null and state = 'complete' order by number").fetchall()
    # Epochs trained: each trial's last validation (a pruned trial stops at its rung).
    epochs = db.execute("select coalesce(sum(e), 0) from (select max(epoch) as e from "
                        "intermediate_values group by trial)").fetchone()[0]
    epochs = round(epochs, 1)
    best_at = lambda n: max([v for k, v in rows if k < n], default=float("nan"))
    return best_at(trials), best_at(half), epochs
rows = {"kiln tpe": [], "optuna tpe": [], "kiln tpe + asha": []}
for seed in range(1, seeds + 1):
    rows["kiln tpe"].append(kiln_study(f"none-{seed}"))
    rows["kiln tpe + asha"].append(kiln_study(f"asha-{seed}"))
    o = json.load(open(f"{out}/optuna-{seed}.json"))
    rows["optuna tpe"].append((o["best"], o["best_after"][half - 1], None))
print(f"\n| sampler | median best val/accuracy after {trials} | after {half} | median epochs trained |")
print("|---|---|---|---|")
for name, r in rows.items():
    epochs = [e for _, _, e in r if e is not None]
    print(f"| {name} | {statistics.median(b for b, _, _ in r):.4f} | {statistics.median(h for _, h, _ in r):.4f} | "
          f"{statistics.median(epochs) if epochs else '-'} |")
full = statistics.median(b for b, _, _ in rows["kiln tpe"])
asha = statistics.median(b for b, _, _ in rows["kiln tpe + asha"])
e_full = statistics.median(e for _, _, e in rows["kiln tpe"])
e_asha = statistics.median(e for _, _, e in rows["kiln tpe + asha"])
print(f"\nASHA: best {asha:.4f} against {full:.4f} unpruned ({100 * (asha - full) / full:+.2f} %), "
      f"{e_asha} of {e_full} epochs ({e_asha / e_full:.2f}); goal (within 0.5 %, at most half): "
      f"{'met' if full - asha <= 0.005 * full and e_asha <= e_full / 2 else 'not met'}")
kiln, optuna = full, statistics.median(b for b, _, _ in rows["optuna tpe"])
print(f"kiln tpe against optuna tpe: {kiln:.4f} vs {optuna:.4f}: {'not worse' if kiln >= optuna else 'worse'}")
PY
