#!/usr/bin/env bash
# On the GPU machine (docs/gpu.md): builds kiln with CUDA through scripts/gpu-build.sh and runs the
# whole suite, LibTorch's tests one process per test so that one crash names its test and the
# others still run. Writes its logs to $OUT (or ./gpu-test-out) and prints a summary.
#
#   scripts/gpu-test.sh [SECONDS]   stops starting tests SECONDS after it began (default 540)
set -uo pipefail

begun=$(date +%s)
budget="${1:-540}"
left() { echo $((budget - ($(date +%s) - begun))); }
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/gpu-test-out}"
mkdir -p "$out"
cd "$root"

scripts/gpu-build.sh install-data
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)'
  g++ --version | head -1
} > "$out/summary.txt" 2>&1

timeout "$(left)" scripts/gpu-build.sh build build-gpu > "$out/build.txt" 2>&1
echo "build: exit $? at $(($(date +%s) - begun)) s" >> "$out/summary.txt"
eval "$(scripts/gpu-build.sh env)"
cd build-gpu
{
  # Which of kiln's C++ standard library calls the loader binds into LibTorch's own copies (what
  # made std::filesystem::remove_all crash, docs/gpu.md): every symbol bound at start-up.
  LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=/tmp/kiln-bindings ./torch_tests --gtest_list_tests > /dev/null 2>&1
  echo "std:: symbols of torch_tests bound into LibTorch: $(cat /tmp/kiln-bindings.* | grep 'binding file ./torch_tests' | grep -E ' to [^ ]*lib(torch|c10)' | grep -Ec '`_ZN?K?St')"
  cat /tmp/kiln-bindings.* | grep 'binding file ./torch_tests' | grep -E ' to [^ ]*lib(torch|c10)' | grep -E '`_ZN?K?St' | sed 's/.* to //' | head -20
} >> "$out/summary.txt"

timeout "$(($(left) / 3))" ctest -j12 -E '^torch_tests' --output-on-failure > "$out/ctest.txt" 2>&1
echo "ctest (all but torch_tests): exit $? at $(($(date +%s) - begun)) s" >> "$out/summary.txt"

./torch_tests --gtest_list_tests | awk '/^[^ ]/ {suite = $1} /^  / {print suite $1}' > /tmp/kiln-tests.txt
mkdir -p /tmp/kiln-test-logs
run_one='log=/tmp/kiln-test-logs/$(echo "$1" | tr / _).log
timeout 120 ./torch_tests --gtest_filter="$1" > "$log" 2>&1; code=$?
grep -q "\[  SKIPPED \]" "$log" && code=skipped; echo "$1 $code"'
timeout "$(($(left) - 10))" xargs -P "$(nproc)" -I{} sh -c "$run_one" _ {} \
  < /tmp/kiln-tests.txt > "$out/torch_tests.txt"
{
  echo "torch_tests: $(wc -l < /tmp/kiln-tests.txt) listed, $(wc -l < "$out/torch_tests.txt") ran," \
    "$(awk '$2 == 0' "$out/torch_tests.txt" | wc -l) passed," \
    "$(awk '$2 == "skipped"' "$out/torch_tests.txt" | wc -l) skipped at $(($(date +%s) - begun)) s"
  awk '$2 != 0 && $2 != "skipped" {print "  failed: " $0}' "$out/torch_tests.txt"
  awk '$2 == "skipped" {print "  skipped: " $1}' "$out/torch_tests.txt"
} >> "$out/summary.txt"
for name in $(awk '$2 != 0 {print $1}' "$out/torch_tests.txt" | head -60); do
  echo "=== $name"
  tail -30 "/tmp/kiln-test-logs/$(echo "$name" | tr / _).log"
done > "$out/torch_failures.txt"
cat "$out/summary.txt"
