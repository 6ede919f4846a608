#!/usr/bin/env python3
"""Writes the seeds of fuzz_record_decoder: records that match its specs (a mode byte, then a
serialized tf.Example or tf.SequenceExample), so that fuzzing starts from records that decode.
Protobuf is written by hand (no TensorFlow here); field numbers from tensorflow/core/example.

    python3 tests/fuzz/make_record_decoder_seeds.py   # from the repository root
"""
import pathlib
import struct

HERE = pathlib.Path(__file__).parent
OUT = HERE / "corpus" / "fuzz_record_decoder"
IMAGES = HERE / "corpus" / "fuzz_image"


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):  # length-delimited
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def floats(*values):  # Feature.float_list (2), packed
    return field(2, field(1, struct.pack(f"<{len(values)}f", *values)))


def ints(*values):  # Feature.int64_list (3), packed
    return field(3, field(1, b"".join(varint(v & (2**64 - 1)) for v in values)))


def byte_list(*values):  # Feature.bytes_list (1)
    return field(1, b"".join(field(1, v) for v in values))


def features(named):  # Features.feature: map<string, Feature>
    return b"".join(field(1, field(1, name.encode()) + field(2, value)) for name, value in named.items())


def example(named):
    return field(1, features(named))


def sequence_example(context, lists):
    feature_lists = b"".join(
        field(1, field(1, name.encode()) + field(2, b"".join(field(1, f) for f in steps)))
        for name, steps in lists.items())
    return field(1, features(context)) + field(2, feature_lists)


def image(name):
    return (IMAGES / name).read_bytes()[1:]  # less fuzz_image's mode byte


SEEDS = {
    "tabular": b"\0" + example({"culmen_length_mm": floats(39.1), "body_mass_g": floats(3750),
                                "species": ints(2), "ints_as_floats": ints(-3, 4)}),
    "tabular_defaults": b"\0" + example({"culmen_length_mm": floats(1.5), "species": ints(0)}),
    "images": b"\1" + example({"image": byte_list(image("grey_4x3")),
                               "photo": byte_list(image("grey_8x8_jpg")),
                               "raw": byte_list(b"\1\2", b"\3\4"), "label": ints(9)}),
    "images_png_only": b"\1" + example({"image": byte_list(image("grey_4x3"))}),
    "sequence": b"\2" + sequence_example(
        {"length": ints(2)},
        {"frames": [floats(1, 2), floats(3, 4)], "tokens": [ints(5), ints(6), ints(7), ints(8)]}),
    "sequence_empty_lists": b"\2" + sequence_example({}, {"frames": [], "tokens": []}),
    # Real records, whose names the specs do not declare: missing features and defaults.
    "tfx_penguin_0": b"\0" + (HERE / "corpus/fuzz_example/penguin_0").read_bytes(),
    "tfx_all_kinds": b"\0" + (HERE / "corpus/fuzz_example/all_kinds").read_bytes(),
    "sequence_frames": b"\2" + (HERE / "corpus/fuzz_sequence_example/frames").read_bytes(),
    "sequence_an_example": b"\2" + (HERE / "corpus/fuzz_sequence_example/an_example").read_bytes(),
}

if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (OUT / name).write_bytes(data)
