#!/usr/bin/env bash
# Trains the Fashion-MNIST example (validated on a tenth of its training images), evaluates the
# checkpoint best on validation on the test split, and prints the test accuracy and the run
# directory.
set -euo pipefail
kiln=${1:-build/kiln}
config=${2:-configs/examples/fashion_mnist/cnn.yaml}

start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$kiln" train "$config" | tee "$log"
run_dir=$(sed -n 's/^run: //p' "$log" | head -n 1)
# The checkpoint best on validation (a tenth of the training images), when the config keeps one;
# the test split is read here, once.
checkpoint=latest
[ -e "$run_dir/checkpoints/best" ] && checkpoint=best
result=$("$kiln" eval "$run_dir" --checkpoint "$checkpoint" --split test --json)
end=$(date +%s)
accuracy=$(printf '%s' "$result" | sed -n 's/.*"test\/accuracy":\([0-9.eE+-]*\).*/\1/p')

echo
echo "test accuracy: $accuracy (the $checkpoint checkpoint)"
echo "run directory: $run_dir"
echo "train + eval time: $((end - start)) s"
