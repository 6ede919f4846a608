#!/usr/bin/env bash
# Hyperparameter search: kiln's TPE sampler against Optuna's (Debian's python3-optuna 3.1, in
# benchmarks/peers/tune_optuna.py), on test functions evaluated instantly, so that the sampler is all
# that costs.
#
#   [SET=cmaes] [FUNCTIONS="..."] benchmarks/tune.sh [TRIALS] [SEEDS]    default: 60 7 (or TRIALS, SEEDS)
#
# The functions, minimised, are defined alike in `kiln tune benchmark` and peers/tune_optuna.py: Branin
# (2 reals, minimum 0.397887), Hartmann-6 (6 reals in [0, 1], minimum -3.32237) and a conditional
# space (a choice between a 1-D bowl and a valley over a log-uniform lr and a log-scale int width,
# minimum 0) and Optuna's tutorial's classifier choice (an SVC's C over 20 decades, best 0.05 in a
# window around 100, or a forest's depth, 0.08 to 0.12 everywhere; FUNCTIONS="..." picks some).
# For each function and seed 1..SEEDS, one study of TRIALS trials each of: kiln tpe
# (multivariate, grouped; 10 startup trials, 24 candidates), Optuna's TPESampler with its defaults
# (independent; 10 startup trials, 24 candidates), Optuna's TPESampler(multivariate=True,
# group=True) (the decomposition kiln's follows) and kiln random as the floor, alternating. The
# table shows, per function and sampler, the medians over seeds of the best value after TRIALS
# and after TRIALS/2 trials and of the sampler's time per trial (kiln: its own measure; Optuna:
# study.ask() plus the suggest calls, not the objective nor tell). Below it, per function, Optuna
# tpe's time per trial over kiln tpe's (> 1: kiln faster) and whether kiln tpe's median best is
# no worse than Optuna tpe's (the goal).
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-${TRIALS:-60}}
seeds=${2:-${SEEDS:-7}}
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}   # Debian's python3-optuna lives here, not in a pyenv
# SET=cmaes compares the samplers of continuous spaces instead: kiln's cmaes against Optuna's
# CmaEsSampler (its defaults), on Hartmann-6 and Rosenbrock-10 by default.
if [ "${SET:-tpe}" = cmaes ]; then
  default_functions="hartmann6 rosenbrock10"
  samplers=("kiln cmaes" "optuna cmaes" "kiln random")
else
  default_functions="branin hartmann6 conditional classifier"
  samplers=("kiln tpe" "optuna tpe" "optuna tpe_multivariate" "kiln random")
fi
read -r -a functions <<< "${FUNCTIONS:-$default_functions}"

for n in "$trials" "$seeds"; do
  if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: benchmarks/tune.sh [TRIALS] [SEEDS] (positive integers)" >&2
    exit 2
  fi
done
if ! command -v "$kiln" > /dev/null; then
  echo "tune.sh: no kiln binary at $kiln: build it first (cmake --build build), or set KILN" >&2
  exit 1
fi
if ! "$python" -c "import optuna" 2> /dev/null; then
  echo "tune.sh: $python cannot import optuna: install python3-optuna, or set PYTHON" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "\$ KILN=$kiln PYTHON=$python benchmarks/tune.sh $trials $seeds"
echo "  each run: $kiln tune benchmark --function F --trials $trials --seed S --sampler tpe|cmaes|random"
echo "            $python benchmarks/peers/tune_optuna.py --function F --trials $trials --seed S" \
  "--sampler tpe|tpe_multivariate|cmaes"
echo

# run FUNCTION SEED LABEL COMMAND...: one study; its JSON line goes to $work/results as
# FUNCTION<tab>SEED<tab>LABEL<tab>JSON, and a dot to stderr.
run() {
  local function=$1 seed=$2 label=$3; shift 3
  if ! "$@" > "$work/out" 2> "$work/err"; then
    printf '\ntune.sh: failed (%s, %s, seed %s): %s\n' "$label" "$function" "$seed" "$*" >&2
    cat "$work/err" >&2
    exit 1
  fi
  printf '%s\t%s\t%s\t%s\n' "$function" "$seed" "$label" "$(grep '^{' "$work/out" | tail -n1)" \
    >> "$work/results"
  printf . >&2
}

for function in "${functions[@]}"; do
  for seed in $(seq "$seeds"); do
    common=(--function "$function" --trials "$trials" --seed "$seed")
    for label in "${samplers[@]}"; do
      if [[ $label == kiln* ]]; then
        run "$function" "$seed" "$label" "$kiln" tune benchmark "${common[@]}" \
          --sampler "${label#kiln }"
      else
        run "$function" "$seed" "$label" \
          "$python" benchmarks/peers/tune_optuna.py "${common[@]}" --sampler "${label#optuna }"
      fi
    done
  done
done
echo >&2

"$python" - "$work/results" "$trials" "$(IFS=,; echo "${samplers[*]}")" "${functions[@]}" <<'EOF'
import json
import statistics
import sys

path, trials, functions = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
half = max(trials // 2, 1)
labels = sys.argv[3].split(",")  # kiln's sampler first, then its Optuna peer
ours, peer = labels[0], labels[1]
runs = {}  # (function, label) -> [(best after trials, best after half, seconds per trial)]
for line in open(path):
    function, seed, label, text = line.rstrip("\n").split("\t", 3)
    where = f"{label} on {function}, seed {seed}"
    try:
        r = json.loads(text)
        best_after = r["best_after"]
        seconds = float(r["sampler_seconds_per_trial"])
    except (ValueError, KeyError, TypeError):
        sys.exit(f"tune.sh: {where} printed no JSON line with best_after and "
                 f"sampler_seconds_per_trial: {text!r}")
    if (r.get("function") != function or r.get("seed") != int(seed) or r.get("trials") != trials
            or len(best_after) != trials):
        sys.exit(f"tune.sh: {where}: the JSON line does not match the request "
                 f"(function {r.get('function')}, seed {r.get('seed')}, trials {r.get('trials')}, "
                 f"{len(best_after)} values in best_after)")
    runs.setdefault((function, label), []).append((best_after[-1], best_after[half - 1], seconds))


def median(function, label, column):
    return statistics.median(run[column] for run in runs[function, label])


print(f"| function | sampler | median best after {trials} | median best after {half} "
      f"| median sampler ms/trial |")
print("|---|---|---|---|---|")
for function in functions:
    for label in labels:
        print(f"| {function} | {label} | {median(function, label, 0):.5g} "
              f"| {median(function, label, 1):.5g} | {1e3 * median(function, label, 2):.3f} |")


def ratio(peer, kiln):
    return f"{peer / kiln:.1f}" if kiln > 0 else "inf"


print()
print(f"| function | ms/trial {peer} / {ours} | median best {ours} | median best {peer} "
      f"| goal met ({ours} <= {peer}) |")
print("|---|---|---|---|---|")
met = 0
for function in functions:
    kiln_best, peer_best = median(function, ours, 0), median(function, peer, 0)
    met += kiln_best <= peer_best
    print(f"| {function} | {ratio(median(function, peer, 2), median(function, ours, 2))} "
          f"| {kiln_best:.5g} | {peer_best:.5g} | {'yes' if kiln_best <= peer_best else 'no'} |")
print(f"\ngoal met on {met} of {len(functions)} functions "
      f"(median over {len(runs[functions[0], labels[0]])} seeds, {trials} trials each)")
EOF
