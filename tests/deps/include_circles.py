#!/usr/bin/env python3
"""Prints the circles among kiln's files: two or more parts (a header and its .cpp, by their
name without extension) that include each other, directly or through others. A part that needs
another which needs it back is one part in two files, or a third should hold what both need.
Tests (*_test.cpp) are left out. Exits 1 when there is a circle not in KNOWN, or when one of
KNOWN is gone (then it leaves the list, which only shrinks).

    tests/deps/include_circles.py ROOT
"""
import os
import re
import sys

# Circles older than this check, to be cut and taken out (the list only shrinks). Issue 59's
# config seam cut the last four, each by a header of what both sides needed.
KNOWN = set()

INCLUDE = re.compile(r'^#include "(kiln/[^"]+)\.(?:h|hpp)"', re.M)


def parts_and_edges(root):
    edges = {}
    for folder, _, files in os.walk(os.path.join(root, "kiln")):
        for name in files:
            if not name.endswith((".h", ".cpp")) or name.endswith("_test.cpp"):
                continue
            path = os.path.join(folder, name)
            part = os.path.relpath(path, root).rsplit(".", 1)[0]
            with open(path, encoding="utf-8", errors="replace") as source:
                included = set(INCLUDE.findall(source.read()))
            edges.setdefault(part, set()).update(p for p in included if p != part)
    return edges


def circles(edges):
    """Tarjan's strongly connected components of more than one part, iteratively."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    found = {" <-> ".join(circle) for circle in circles(parts_and_edges(root))}
    failed = False
    for circle in sorted(found - KNOWN):
        print("a circle of includes: " + circle)
        failed = True
    # Only the repository's own tree is held to KNOWN: a scratch tree has none of it.
    if os.path.isfile(os.path.join(root, "kiln", "engine", "trainer.h")):
        for gone in sorted(KNOWN - found):
            print(f"{gone} is no circle any more: take it out of KNOWN in {__file__}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
