#!/usr/bin/env bash
# Runs one fuzz target (tests/fuzz/README.md). The repository's seeds and dictionaries are only
# read: new corpus entries, findings and the log go under OUT.
#
#   run.sh BINARY SECONDS OUT [libFuzzer flags]          `make fuzz`: the corpus in OUT grows
#                                                        from run to run, the seeds are read too
#   run.sh --fresh BINARY SECONDS OUT [libFuzzer flags]  ctest: starts again from a copy of the
#                                                        seeds (KILN_FUZZ_SHORT_SECONDS overrides
#                                                        SECONDS)
#   run.sh --regressions BINARY                          runs the inputs that failed before, once
#
# Exits non-zero when the run found something; the last lines of the log then say what.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
mode=grow
case "${1:-}" in --fresh | --regressions) mode=${1#--} && shift ;; esac
binary=$1
name=$(basename "$binary")
# -max_len: inputs may grow to 1 MiB, enough for a body nested far past every depth limit (each
# JSON-reading target has such a seed).
limits=(-timeout=10 -rss_limit_mb=2048 -max_len=1048576)
# UBSan findings come with their stack, as ASan's do.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

if [ "$mode" = regressions ]; then
  # Files, not a folder: libFuzzer runs each once and stops at the first that fails.
  exec "$binary" "${limits[@]}" "$here/regressions/$name"/*
fi

seconds=$2 out=$3
shift 3
[ "$mode" = fresh ] && seconds=${KILN_FUZZ_SHORT_SECONDS:-$seconds}
corpus=$out/corpus/$name artifacts=$out/artifacts/$name log=$out/logs/$name.log
# Targets that read files write them under TMPDIR; a crashed run leaves its file here, not in /tmp.
export TMPDIR=$out/tmp
mkdir -p "$artifacts" "$out/logs" "$out/corpus" "$TMPDIR"
seeds=("$here/corpus/$name")
if [ "$mode" = fresh ]; then
  rm -rf "$corpus" && cp -r "$here/corpus/$name" "$corpus" && seeds=()
fi
mkdir -p "$corpus"
flags=("${limits[@]}" -max_total_time="$seconds" -artifact_prefix="$artifacts/" -print_final_stats=1)
[ -f "$here/$name.dict" ] && flags+=(-dict="$here/$name.dict")

started=$(mktemp) && trap 'rm -f "$started"' EXIT
status=0
# libFuzzer adds new entries to the first corpus folder only.
"$binary" "${flags[@]}" "$@" "$corpus" "${seeds[@]}" >"$log" 2>&1 || status=$?
findings=$(find "$artifacts" -type f -newer "$started" | sort)
echo "$name: $(grep -E 'cov: [0-9]+' "$log" | tail -n 1)"
if [ "$status" -ne 0 ] || [ -n "$findings" ]; then
  tail -n 60 "$log"
  echo "$name: FAILED (exit $status); inputs: ${findings:-none saved}; log: $log"
  exit 1
fi
