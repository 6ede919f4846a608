#!/usr/bin/python3
"""Writes data/shapes/train.csv (8,000 rows) and data/shapes/test.csv (2,000 rows) for
configs/examples/shapes/shapes.yaml: objects with a color, a shape, a size and a weight, labelled
by a known rule, with strings in two columns and missing weights, as TFX's data has them.

    label = "in"  when (color is red or blue and size > 5) or shape is square, else "out"

The weight plays no part in the rule and is left empty in one row of twenty. Run from the
repository root; the output depends on nothing but the seeds.
"""

import os
import random

COLORS = ["red", "green", "blue", "yellow"]
SHAPES = ["circle", "square", "triangle"]


def rows(count, seed):
    draw = random.Random(seed)
    for _ in range(count):
        color, shape = draw.choice(COLORS), draw.choice(SHAPES)
        size = round(draw.uniform(0, 10), 2)
        weight = "" if draw.random() < 0.05 else f"{draw.gauss(50, 15):.1f}"
        inside = (color in ("red", "blue") and size > 5) or shape == "square"
        yield f"{color},{shape},{size},{weight},{'in' if inside else 'out'}\n"


def write(path, count, seed):
    with open(path, "w") as out:
        out.write("color,shape,size,weight,label\n")
        out.writelines(rows(count, seed))


def main():
    os.makedirs("data/shapes", exist_ok=True)
    write("data/shapes/train.csv", 8000, 1)
    write("data/shapes/test.csv", 2000, 2)


if __name__ == "__main__":
    main()
