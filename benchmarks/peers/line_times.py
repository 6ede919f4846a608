#!/usr/bin/python3
"""Runs a command and prints each line of its output (stdout and stderr together) as it comes,
with the seconds since the command was started in front: `SECONDS LINE`; then `SECONDS exit
CODE`. benchmarks/whole_run.sh reads kiln's and its peer's phases from these times.

    line_times.py COMMAND [ARGUMENT...]
"""
import subprocess
import sys
import time


def main():
    started = time.perf_counter()
    process = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    for line in process.stdout:
        print(f"{time.perf_counter() - started:.3f} {line.rstrip()}", flush=True)
    process.wait()
    print(f"{time.perf_counter() - started:.3f} exit {process.returncode}", flush=True)
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
