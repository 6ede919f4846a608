#!/usr/bin/python3
"""Optuna's TPE driving the same `kiln train` trials as `kiln tune` (benchmarks/tune_fashion.sh).

    /usr/bin/python3 benchmarks/peers/tune_fashion_optuna.py --kiln build/kiln \
        --config configs/examples/fashion_mnist/mlp_tune.yaml --trials 20 --seed 1 \
        --out DIR [--set K=V ...]

Each trial suggests the parameters of the config's tune.space (the same ranges and scales),
trains the config with them set (its tune section is ignored by `kiln train`) and returns the
run's last val/accuracy. Prints one JSON line: {"sampler": "optuna tpe", "seed", "trials",
"best", "best_after": [...], "values": [...]}.
"""
import argparse
import json
import os
import subprocess
import sys

import optuna


def suggest(trial):
    return {
        "optimizer.lr": trial.suggest_float("optimizer.lr", 1e-4, 1e-2, log=True),
        "optimizer.weight_decay": trial.suggest_float("optimizer.weight_decay", 1e-6, 1e-1, log=True),
        "model.layers[1].out": trial.suggest_int("model.layers[1].out", 32, 1024, log=True),
        "data.batch_size": trial.suggest_categorical("data.batch_size", [32, 64, 128, 256]),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=args.seed, n_startup_trials=8))
    values = []

    def objective(trial):
        run = os.path.join(args.out, "trial-%04d" % trial.number)
        command = [args.kiln, "train", args.config, "--run-dir", run, "--quiet"]
        for assignment in args.set:
            command += ["--set", assignment]
        for key, value in suggest(trial).items():
            command += ["--set", "%s=%s" % (key, json.dumps(value))]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(run, "summary.json")) as f:
            value = json.load(f)["final"]["val/accuracy"]
        values.append(value)
        return value

    study.optimize(objective, n_trials=args.trials)
    best, best_after = -1.0, []
    for v in values:
        best = max(best, v)
        best_after.append(best)
    print(json.dumps({"sampler": "optuna tpe", "seed": args.seed, "trials": len(values),
                      "best": best, "best_after": best_after, "values": values}))


if __name__ == "__main__":
    sys.exit(main())
