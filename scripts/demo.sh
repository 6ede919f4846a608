#!/usr/bin/env bash
# Trains the Fashion-MNIST example, evaluates it on the test split, and prints the test accuracy
# and the run directory.
set -euo pipefail
kiln=${1:-build/kiln}
config=${2:-configs/examples/fashion_mnist/cnn.yaml}

start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$kiln" train "$config" | tee "$log"
run_dir=$(sed -n 's/^run: //p' "$log" | head -n 1)
result=$("$kiln" eval "$run_dir" --split test --json)
end=$(date +%s)
accuracy=$(printf '%s' "$result" | sed -n 's/.*"test\/accuracy":\([0-9.eE+-]*\).*/\1/p')

echo
echo "test accuracy: $accuracy"
echo "run directory: $run_dir"
echo "train + eval time: $((end - start)) s"
