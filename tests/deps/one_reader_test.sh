#!/usr/bin/env bash
# Checks that each file format kiln reads back has one owner (docs/architecture.md, "One reader
# per format"): outside its owner's files no code spells the file's name as a string, nor uses
# the constant that names it, so a second reader cannot appear without this test failing. The
# one writer of a format that kiln writes elsewhere is named beside its owner. Tests
# (*_test.cpp, test rigs) are left out. Then it checks itself: a reader added elsewhere must
# make it fail.
#
#   tests/deps/one_reader_test.sh [ROOT]     ROOT: the repository (default: this file's)
set -uo pipefail

root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"

# A format: its file name, the constant that names it, and the files (an extended regex over
# paths from the repository root) that may name it: its readers, then its writer.
formats=(
  "run.json|kRecordFile|^kiln/run/|^kiln/experiment/run_folder\.cpp$"
  "summary.json|kSummaryFile|^kiln/run/|^kiln/experiment/run_folder\.cpp$|^kiln/board/(report|board_page)\.cpp$"
  "metrics.csv|kMetricsFile|^kiln/run/|^kiln/experiment/run_folder\.cpp$"
  "train_state.json|kTrainStateFile|^kiln/engine/train_state(_json)?\.(h|cpp)$|^kiln/engine/checkpoint\.cpp$"
  "model.yaml|kModelFile|^kiln/export/exported_model\.cpp$|^kiln/export/export\.cpp$|^kiln/export/predict_inputs\.cpp$|^kiln/export/version_inputs\.cpp$"
  "module.pt|kModuleFile|^kiln/experiment/open_model\.cpp$|^kiln/run/run_directory\.h$|^kiln/experiment/run_folder\.cpp$"
  "preprocessing.json|kPreprocessingFile|^kiln/experiment/preprocessing_file\.cpp$|^kiln/tabular/feature_columns_preprocessing\.cpp$|^kiln/run/run_directory\.h$|^kiln/experiment/run_folder\.cpp$|^kiln/export/export\.cpp$"
)
# Beside the owners and writers: the board names summary.json because the page asks `run/` for a
# run's texts by name (run::read_run_text), opening no file itself; predict_inputs and
# version_inputs name model.yaml in their errors about the reader section ExportedModel read; tabular/feature_columns_preprocessing
# parses preprocessing.json's content (from_preprocessing) that experiment/preprocessing_file reads, and
# names the file in its errors; run/run_directory.h spells the run folder's file names.

# Checks the tree at ROOT; prints each breach, returns 1 if any.
check() {
  local tree="$1" failed=0 entry name constant allowed file quoted
  for entry in "${formats[@]}"; do
    name="${entry%%|*}"
    constant="$(cut -d'|' -f2 <<<"$entry")"
    allowed="$(cut -d'|' -f3- <<<"$entry")"
    quoted="[\"/]${name//./\\.}\""
    while IFS= read -r file; do
      file="${file#"$tree"/}"
      [[ "$file" =~ $allowed ]] && continue
      echo "$file: names $name ($constant), which only its owner reads: go through it"
      failed=1
    done < <(grep -rlE -e "$quoted" -e "\\b$constant\\b" "$tree/kiln" "$tree/apps" \
      --include='*.h' --include='*.cpp' 2>/dev/null | grep -v -E '(_test\.cpp|_test_rig\.h)$')
  done
  return "$failed"
}

status=0
check "$root" || status=1

# The check must catch what it is for: run.json read by the tuner, metrics.csv through the
# constant by the engine.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/kiln/tune" "$scratch/kiln/engine" "$scratch/kiln/run" "$scratch/apps"
printf 'Json r = read_json_file(dir + "/run.json");\n' >"$scratch/kiln/tune/wrong.cpp"
printf 'read_text_file(dir + "/" + run::kMetricsFile);\n' >"$scratch/kiln/engine/wrong.cpp"
printf 'Json r = read_json_file(dir + "/run.json");\n' >"$scratch/kiln/run/fine.cpp"
printf 'Json r = read_json_file(dir + "/run.json");\n' >"$scratch/kiln/tune/fine_test.cpp"
found="$(check "$scratch")"
for expected in "kiln/tune/wrong.cpp: names run.json" "kiln/engine/wrong.cpp: names metrics.csv"; do
  if [[ "$found" != *"$expected"* ]]; then
    echo "self-check: a second reader was not refused ($expected)"
    status=1
  fi
done
if [[ "$found" == *fine* ]]; then
  echo "self-check: the owner or a test was refused: $found"
  status=1
fi
exit "$status"
