#!/usr/bin/python3
"""Writes tests/golden/tabular.json, the statistics kiln's feature columns must fit
(kiln/tabular/tabular_golden_test.cpp), computed by NumPy and scikit-learn on generated data.

Re-run from the repository root after changing a case; the output is deterministic:

    /usr/bin/python3 tests/golden/make_tabular_golden.py

Each case holds float32 values (what a tf.Example's float_list carries: the test reads them as
float32, as kiln does) and what scikit-learn's StandardScaler and MinMaxScaler fit on them
(mean, population standard deviation, minimum and maximum), numpy.quantile's linear edges for
N quantile buckets, and KBinsDiscretizer's bucket of some values given those edges.
"""

import json
import os

import numpy
from sklearn.preprocessing import MinMaxScaler, StandardScaler


def case(name, values, quantiles):
    values = numpy.asarray(values, dtype=numpy.float32)
    column = values.astype(numpy.float64).reshape(-1, 1)
    standard = StandardScaler().fit(column)
    minmax = MinMaxScaler().fit(column)
    edges = numpy.quantile(column[:, 0], [i / quantiles for i in range(1, quantiles)])
    edges = sorted(set(float(e) for e in edges))
    probes = [float(v) for v in values[:7]]
    return {
        "name": name,
        "values": [float(v) for v in values],
        "mean": float(standard.mean_[0]),
        "std": float(standard.scale_[0]),
        "min": float(minmax.data_min_[0]),
        "max": float(minmax.data_max_[0]),
        "quantiles": quantiles,
        "edges": edges,
        "probes": probes,
        # The bucket of each probe: edges at or below it (a value on an edge goes above).
        "buckets": [int(numpy.searchsorted(edges, p, side="right")) for p in probes],
    }


def main():
    rng = numpy.random.default_rng(21)
    cases = [
        case("normal", rng.normal(3.0, 2.0, 5000), 4),
        case("lognormal", rng.lognormal(0.0, 1.0, 3001), 10),
        case("integers with ties", rng.integers(0, 6, 997), 5),
        case("one value", [2.5] * 10, 3),
    ]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tabular.json")
    with open(path, "w") as out:
        json.dump({"generator": "tests/golden/make_tabular_golden.py", "cases": cases}, out,
                  indent=None, separators=(",", ":"))
        out.write("\n")


if __name__ == "__main__":
    main()
