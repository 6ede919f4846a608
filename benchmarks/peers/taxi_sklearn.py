#!/usr/bin/python3
"""scikit-learn on the Chicago-taxi example's split (configs/examples/chicago_taxi): the same
tf.Example records kiln trains on, read here from the TFRecord files (framing read by hand, the
records parsed by Python stubs generated from the repository's example.proto), the same label
(a tip above a fifth of the fare; no fare, no big tipper) and the same preparation of the
features as the kiln config's columns: z-scores of trip_miles, fare and trip_seconds (gaps
filled with the training mean), one-hot vocabularies of payment_type and company, ten quantile
buckets of each coordinate, and the hour, day, month, census tracts and community areas as
categories (a gap a category of its own). Two models are fitted on the training file and scored
on the test file by ROC AUC:
  - logistic regression (lbfgs, C=1) over the one-hot and z-scored features: a linear model,
    as the wide part of kiln's wide_deep alone;
  - histogram gradient boosting over the raw numbers and the categories' codes.

    taxi_sklearn.py TRAIN.tfrecord.gz TEST.tfrecord.gz     prints one JSON object
    taxi_sklearn.py --auc-of PREDICTIONS.jsonl TEST.tfrecord.gz
                                  the ROC AUC of `kiln predict`'s probabilities of the test file
"""
import gzip
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kiln",
                         "serving", "grpc", "proto")
DENSE = ["trip_miles", "fare", "trip_seconds"]
BUCKETED = ["pickup_latitude", "pickup_longitude", "dropoff_latitude", "dropoff_longitude"]
CATEGORIES = ["payment_type", "company", "trip_start_hour", "trip_start_day", "trip_start_month",
              "pickup_census_tract", "dropoff_census_tract", "pickup_community_area",
              "dropoff_community_area"]


def example_module(out):
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", PROTO_DIR, "--python_out",
                    out, "tensorflow/core/example/example.proto",
                    "tensorflow/core/example/feature.proto"], check=True)
    sys.path.insert(0, out)
    from tensorflow.core.example import example_pb2
    return example_pb2


def records(path, example_pb2):
    with gzip.open(path, "rb") as f:
        data = f.read()
    at, rows = 0, []
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        payload = data[at + 12:at + 12 + length]
        at += 12 + length + 4
        example = example_pb2.Example.FromString(payload)
        row = {}
        for name, feature in example.features.feature.items():
            kind = feature.WhichOneof("kind")
            values = list(getattr(feature, kind).value) if kind else []
            if values:
                value = values[0]
                row[name] = value.decode() if isinstance(value, bytes) else value
        rows.append(row)
    return rows


def label(row):
    if "fare" not in row:
        return 0
    return int(row.get("tips", 0) > 0.2 * row["fare"])


def category(value):
    # A whole number held as a float is that integer, as kiln's columns read it.
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class Prepared:
    """The preparation fitted on the training rows, applied to any rows."""

    def __init__(self, train):
        self.means = {n: np.mean([r[n] for r in train if n in r]) for n in DENSE}
        self.stds = {n: np.std([r.get(n, self.means[n]) for r in train]) or 1.0 for n in DENSE}
        self.edges = {n: np.unique(np.quantile([r[n] for r in train if n in r],
                                               np.arange(1, 10) / 10)) for n in BUCKETED}
        self.vocab = {}
        for n in CATEGORIES:
            seen = sorted({category(r[n]) for r in train if n in r})
            self.vocab[n] = {v: i for i, v in enumerate(seen)}

    def dense(self, rows):
        return np.array([[(r.get(n, self.means[n]) - self.means[n]) / self.stds[n]
                          for n in DENSE] for r in rows])

    def codes(self, rows):
        """Each bucketed and categorical feature's code: -1 for a gap, len(vocab) unseen."""
        out = []
        for r in rows:
            row = [(-1 if n not in r else int(np.searchsorted(self.edges[n], r[n], "right")))
                   for n in BUCKETED]
            row += [(-1 if n not in r else self.vocab[n].get(category(r[n]), len(self.vocab[n])))
                    for n in CATEGORIES]
            out.append(row)
        return np.array(out)

    def one_hot(self, rows):
        codes = self.codes(rows)
        sizes = [len(self.edges[n]) + 1 for n in BUCKETED] + \
                [len(self.vocab[n]) + 1 for n in CATEGORIES]
        blocks = []
        for j, size in enumerate(sizes):
            block = np.zeros((len(rows), size + 1))  # the last slot: a gap
            block[np.arange(len(rows)), np.where(codes[:, j] < 0, size, codes[:, j])] = 1
            blocks.append(block)
        return np.hstack([self.dense(rows)] + blocks)


def main(train_path, test_path):
    with tempfile.TemporaryDirectory() as stubs:
        example_pb2 = example_module(stubs)
        train, test = records(train_path, example_pb2), records(test_path, example_pb2)
    y_train = np.array([label(r) for r in train])
    y_test = np.array([label(r) for r in test])
    prepared = Prepared(train)
    report = {"train_rows": len(train), "test_rows": len(test),
              "test_big_tipper_share": float(y_test.mean())}
    started = time.perf_counter()
    linear = LogisticRegression(C=1.0, max_iter=2000).fit(prepared.one_hot(train), y_train)
    report["logistic_regression"] = {
        "test_auc": roc_auc_score(y_test, linear.predict_proba(prepared.one_hot(test))[:, 1]),
        "seconds": time.perf_counter() - started}
    started = time.perf_counter()
    raw = lambda rows: np.hstack([prepared.dense(rows), prepared.codes(rows)])
    categorical = [False] * len(DENSE) + [False] * len(BUCKETED) + [True] * len(CATEGORIES)
    boosted = HistGradientBoostingClassifier(random_state=1, categorical_features=categorical)
    # Codes of -1 (gaps) and unseen values are no categories to the booster: as missing.
    def for_booster(rows):
        x = raw(rows).astype(float)
        x[:, len(DENSE):][x[:, len(DENSE):] < 0] = np.nan
        return x
    boosted.fit(for_booster(train), y_train)
    report["gradient_boosting"] = {
        "test_auc": roc_auc_score(y_test, boosted.predict_proba(for_booster(test))[:, 1]),
        "seconds": time.perf_counter() - started}
    print(json.dumps(report))


def auc_of(predictions_path, test_path):
    with tempfile.TemporaryDirectory() as stubs:
        test = records(test_path, example_module(stubs))
    with open(predictions_path) as f:
        scores = [json.loads(line)["probabilities"][1] for line in f if line.strip()]
    assert len(scores) == len(test), (len(scores), len(test))
    print(json.dumps({"test_auc": roc_auc_score([label(r) for r in test], scores)}))


if __name__ == "__main__":
    if sys.argv[1] == "--auc-of":
        auc_of(*sys.argv[2:4])
    else:
        main(*sys.argv[1:3])
