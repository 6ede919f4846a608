#!/usr/bin/python3
"""The peer of benchmarks/tune.sh: `kiln tune benchmark` as an Optuna study.

    /usr/bin/python3 benchmarks/peers/tune_optuna.py \
        --function branin|hartmann6|conditional|classifier|rosenbrock10 \
        --trials N --seed S --sampler tpe|tpe_multivariate|cmaes|random

Minimises one of the test functions below, defined exactly as kiln's, with Optuna's sampler:
`tpe` is TPESampler(seed=S) with its defaults (10 startup trials, 24 candidates, independent),
`tpe_multivariate` is TPESampler(seed=S, multivariate=True, group=True) (the decomposition kiln's
TPE uses), `cmaes` is CmaEsSampler(seed=S) with its defaults (one random trial, then CMA-ES
from the middle of the space with a step of a sixth of it; Debian's python3-cmaes) and `random`
is RandomSampler(seed=S). The study is in memory and driven through
ask/tell so that only the sampler is timed: study.ask() plus the trial's suggest_* calls (where
Optuna samples: relative sampling in ask, independent sampling in suggest), not the objective nor
tell. Debian's python3-optuna (3.1) is importable by /usr/bin/python3 only.

Prints one JSON line, as kiln does: function, sampler, seed, trials, best (the lowest value),
best_after (the best value after each trial, N numbers) and sampler_seconds_per_trial (the
sampler's time over all N trials, divided by N).
"""
import argparse
import json
import math
import time
import warnings

import optuna


# Branin-Hoo on x1 in [-5, 10], x2 in [0, 15]; global minimum 0.397887 (three points).
def branin(trial):
    x1 = trial.suggest_float("x1", -5.0, 10.0)
    x2 = trial.suggest_float("x2", 0.0, 15.0)
    return lambda: branin_value(x1, x2)


def branin_value(x1, x2):
    a, b, c = 1.0, 5.1 / (4 * math.pi ** 2), 5 / math.pi
    r, s, t = 6.0, 10.0, 1 / (8 * math.pi)
    return a * (x2 - b * x1 ** 2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s


# Hartmann 6-D on [0, 1]^6; global minimum -3.32237 at
# (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573).
HARTMANN_ALPHA = [1.0, 1.2, 3.0, 3.2]
HARTMANN_A = [[10, 3, 17, 3.5, 1.7, 8],
              [0.05, 10, 17, 0.1, 8, 14],
              [3, 3.5, 1.7, 10, 17, 8],
              [17, 8, 0.05, 10, 0.1, 14]]
HARTMANN_P = [[1e-4 * p for p in row] for row in
              [[1312, 1696, 5569, 124, 8283, 5886],
               [2329, 4135, 8307, 3736, 1004, 9991],
               [2348, 1451, 3522, 2883, 3047, 6650],
               [4047, 8828, 8732, 5743, 1091, 381]]]


def hartmann6(trial):
    x = [trial.suggest_float(f"x{j + 1}", 0.0, 1.0) for j in range(6)]
    return lambda: hartmann6_value(x)


def hartmann6_value(x):
    return -sum(alpha * math.exp(-sum(a * (xj - p) ** 2 for a, xj, p in zip(row_a, x, row_p)))
                for alpha, row_a, row_p in zip(HARTMANN_ALPHA, HARTMANN_A, HARTMANN_P))


# A conditional space: a choice, then only the chosen branch's parameters (define-by-run).
# Global minimum 0 (bowl, x = 1); the valley's floor is 0.25 (lr = 1e-2, width = 16).
def conditional(trial):
    kind = trial.suggest_categorical("kind", ["bowl", "valley"])
    if kind == "bowl":
        x = trial.suggest_float("x", -5.0, 5.0)
        return lambda: (x - 1) ** 2
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    width = trial.suggest_int("width", 1, 64, log=True)
    return lambda: (math.log10(lr) + 2) ** 2 + 0.05 * abs(math.log2(width) - 4) + 0.25


# Optuna's documented conditional space (its first tutorial's classifier choice), the models'
# error rates replaced by instant functions as in `kiln tune benchmark`: minimum 0.05 (SVC,
# C = 100); the forest is 0.08 at depth 8.
def classifier(trial):
    kind = trial.suggest_categorical("kind", ["svc", "forest"])
    if kind == "svc":
        c = trial.suggest_float("svc_c", 1e-10, 1e10, log=True)
        return lambda: 0.05 + 0.9 * (1 - math.exp(-((math.log10(c) - 2) / 4) ** 2))
    depth = trial.suggest_int("rf_max_depth", 2, 32, log=True)
    return lambda: 0.08 + 0.01 * (math.log2(depth) - 3) ** 2


# Rosenbrock's valley in 10 dimensions, each in [-2.048, 2.048]: minimum 0 at (1, ..., 1).
def rosenbrock10(trial):
    x = [trial.suggest_float(f"x{i}", -2.048, 2.048) for i in range(1, 11)]
    return lambda: sum(100 * (b - a * a) ** 2 + (1 - a) ** 2 for a, b in zip(x, x[1:]))


FUNCTIONS = {"branin": branin, "hartmann6": hartmann6, "conditional": conditional,
             "classifier": classifier, "rosenbrock10": rosenbrock10}


def make_sampler(name, seed):
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "tpe_multivariate":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True)
    if name == "cmaes":  # its defaults: one random trial first, then CMA-ES from the middle
        return optuna.samplers.CmaEsSampler(seed=seed)
    return optuna.samplers.RandomSampler(seed=seed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--function", required=True, choices=sorted(FUNCTIONS))
    parser.add_argument("--trials", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--sampler", default="tpe", choices=["tpe", "tpe_multivariate", "cmaes", "random"])
    args = parser.parse_args()
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

    study = optuna.create_study(direction="minimize", sampler=make_sampler(args.sampler, args.seed))
    suggest = FUNCTIONS[args.function]
    sampler_seconds, best, best_after = 0.0, math.inf, []
    for _ in range(args.trials):
        start = time.perf_counter()
        trial = study.ask()
        objective = suggest(trial)
        sampler_seconds += time.perf_counter() - start
        value = objective()
        study.tell(trial, value)
        best = min(best, value)
        best_after.append(best)
    print(json.dumps({"function": args.function, "sampler": args.sampler, "seed": args.seed,
                      "trials": args.trials, "best": best, "best_after": best_after,
                      "sampler_seconds_per_trial": sampler_seconds / args.trials},
                     separators=(",", ":")))


if __name__ == "__main__":
    main()
