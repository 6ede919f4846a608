#!/usr/bin/python3
"""Writes tests/golden/fanova.json: Optuna 3.1's fANOVA importances (its default evaluator,
FanovaImportanceEvaluator(seed=0): scikit-learn's random forest of 64 trees) of fixed sets of
trials, which kiln's fanova (kiln/tune/fanova.h) is checked against. Spaces of uniform and
(non-log) int parameters only: Optuna one-hot encodes a choice and measures a log parameter on
its raw scale, where kiln uses the search coordinate, so those are not compared.

    /usr/bin/python3 tests/golden/make_fanova_golden.py
"""
import json
import math
import os

import numpy as np
import optuna
from optuna.distributions import FloatDistribution, IntDistribution
from optuna.importance import FanovaImportanceEvaluator, get_param_importances

CASES = [
    {
        "name": "a_slope_a_wave_and_noise",
        "space": {"x0": {"type": "uniform", "low": 0, "high": 1},
                  "x1": {"type": "uniform", "low": 0, "high": 1},
                  "x2": {"type": "uniform", "low": 0, "high": 1}},
        "function": lambda p: 4 * p["x0"] + math.sin(6 * p["x1"]) + 0.1 * p["x2"],
    },
    {
        "name": "a_bowl_and_a_count",
        "space": {"a": {"type": "uniform", "low": -1, "high": 1},
                  "n": {"type": "int", "low": 0, "high": 10}},
        "function": lambda p: (p["a"] - 0.3) ** 2 + 0.05 * p["n"],
    },
    {
        "name": "an_interaction",
        "space": {"u": {"type": "uniform", "low": 0, "high": 2},
                  "v": {"type": "uniform", "low": 0, "high": 2},
                  "w": {"type": "uniform", "low": 0, "high": 2}},
        "function": lambda p: p["u"] * p["v"] + 0.5 * p["w"] ** 2,
    },
]


def distribution(spec):
    if spec["type"] == "int":
        return IntDistribution(spec["low"], spec["high"])
    return FloatDistribution(spec["low"], spec["high"])


def main():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    draw = np.random.default_rng(7)
    out = []
    for case in CASES:
        distributions = {name: distribution(spec) for name, spec in case["space"].items()}
        study = optuna.create_study()
        trials = []
        for _ in range(100):
            params = {}
            for name, spec in case["space"].items():
                if spec["type"] == "int":
                    params[name] = int(draw.integers(spec["low"], spec["high"] + 1))
                else:
                    params[name] = float(draw.uniform(spec["low"], spec["high"]))
            value = case["function"](params)
            study.add_trial(optuna.trial.create_trial(params=params, distributions=distributions,
                                                      value=value))
            trials.append({"values": params, "value": value})
        importances = get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
        out.append({"name": case["name"], "space": case["space"], "trials": trials,
                    "importances": dict(importances)})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fanova.json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/golden/make_fanova_golden.py", "optuna": optuna.__version__,
                   "cases": out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
