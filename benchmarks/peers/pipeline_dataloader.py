"""The peer of benchmarks/pipeline.sh: Fashion-MNIST TFRecord shards of tf.Example through a
PyTorch DataLoader doing what kiln's pipeline does: decode the `image` and `label` features,
scale to [0, 1], random_crop (28, padding 2), random_flip (horizontal, p 0.5), normalize
(0.286, 0.353), shuffle, batch 128, with the same number of worker processes.

Debian has no Python protobuf or TensorFlow, so records are framed and tf.Example is decoded by
a small wire-format reader written here (CRCs are not checked, which only helps the peer). As in
kiln's `cache: records`, the serialized records are read into memory before timing; decoding and
augmentation happen per example in the workers, every epoch. Prints one JSON line.
"""
import argparse
import glob
import gzip
import json
import struct
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

MEAN, STD = 0.286, 0.353


def read_records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    records, at = [], 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        records.append(data[at + 12:at + 12 + length])
        at += 12 + length + 4
    return records


def varint(buf, at):
    value, shift = 0, 0
    while True:
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def fields(buf):
    """(field number, wire type, value) of a message; value is bytes for length-delimited."""
    at = 0
    while at < len(buf):
        key, at = varint(buf, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(buf, at)
        elif wire == 2:
            length, at = varint(buf, at)
            value, at = buf[at:at + length], at + length
        elif wire == 1:
            value, at = buf[at:at + 8], at + 8
        elif wire == 5:
            value, at = buf[at:at + 4], at + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def parse_example(record):
    """{name: Feature bytes} of a tf.Example (Example.features = 1, Features.feature = 1)."""
    features = {}
    for number, _, features_msg in fields(record):
        if number != 1:
            continue
        for entry_number, _, entry in fields(features_msg):
            if entry_number != 1:
                continue
            key, value = None, b""
            for n, _, v in fields(entry):
                if n == 1:
                    key = v.decode()
                elif n == 2:
                    value = v
            features[key] = value
    return features


def bytes_value(feature):
    for number, _, lst in fields(feature):  # Feature.bytes_list = 1
        if number == 1:
            for n, _, v in fields(lst):  # BytesList.value = 1
                if n == 1:
                    return v
    raise ValueError("no bytes_list")


def int64_value(feature):
    for number, _, lst in fields(feature):  # Feature.int64_list = 3
        if number == 3:
            for n, wire, v in fields(lst):  # Int64List.value = 1, packed or not
                if n == 1 and wire == 0:
                    return v
                if n == 1 and wire == 2:
                    return varint(v, 0)[0]
    raise ValueError("no int64_list")


class TfRecordImages(Dataset):
    def __init__(self, pattern):
        self.records = [r for path in sorted(glob.glob(pattern)) for r in read_records(path)]

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        features = parse_example(self.records[index])
        pixels = np.frombuffer(bytes_value(features["image"]), dtype=np.uint8)
        image = torch.from_numpy(pixels.copy()).float().div_(255.0).view(1, 28, 28)
        padded = torch.nn.functional.pad(image, (2, 2, 2, 2))
        top, left = torch.randint(0, 5, (2,)).tolist()
        image = padded[:, top:top + 28, left:left + 28]
        if torch.rand(1).item() < 0.5:
            image = image.flip(2)
        image = (image - MEAN) / STD
        return image, int64_value(features["label"])


def arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=128)
    return parser.parse_args()


def report_rate(make_loader, args):
    """Times from making the loader to its last batch of the last epoch; prints one JSON line."""
    start = time.perf_counter()
    loader = make_loader()
    examples = batches = 0
    for _ in range(args.epochs):
        for images, labels in loader:
            examples += images.shape[0]
            batches += 1
    seconds = time.perf_counter() - start
    print(json.dumps({"epochs": args.epochs, "batches": batches, "examples": examples,
                      "seconds": seconds, "examples_per_s": examples / seconds,
                      "workers": args.workers}))


def main():
    args = arguments()
    torch.manual_seed(1)
    dataset = TfRecordImages(args.files)
    report_rate(lambda: DataLoader(dataset, batch_size=args.batch, shuffle=True,
                                   num_workers=args.workers, persistent_workers=args.workers > 0),
                args)


if __name__ == "__main__":
    main()
