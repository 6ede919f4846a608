#!/usr/bin/env bash
# Test accuracy of the Fashion-MNIST CNN example (configs/examples/fashion_mnist/cnn.yaml, 8
# epochs, global batch 128) trained by one process and by 2 ranks started each way kiln supports
# on one machine: `kiln launch`, torchrun's agent (scripts/torchrun --no_python), a TensorFlow
# cluster's TF_CONFIG (chief and worker), and two hosts made of Linux network namespaces joined by
# a veth pair (rendezvous over TCP between their addresses; skipped where namespaces are not
# permitted). Each row is `kiln eval RUN --split test` of the run's best checkpoint.
#
#   benchmarks/ddp_accuracy.sh [EPOCHS]       default: 8 (the example's)
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-8}
kiln=$(realpath "${KILN:-build/kiln}")
config=$(realpath configs/examples/fashion_mnist/cnn.yaml)
work=$(mktemp -d)
netns=kilnacc$$
cleanup() {
  ip netns del "${netns}a" 2>/dev/null || true
  ip netns del "${netns}b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
train=(train "$config" --set "train.max=$epochs epochs")

# The test accuracy of the run a log names ("run: DIR", with or without a rank prefix).
accuracy() {
  local run; run=$(sed -n 's/^\(\[rank 0\] \)\{0,1\}run: //p' "$1" | head -n1)
  "$kiln" eval "$run" --split test 2>&1 | awk '$1 == "test/accuracy" {print $2}'
}
row() { echo "| $1 | $2 | $(accuracy "$3") |"; }

echo "| started by | processes | test accuracy |"
echo "|---|---|---|"
"$kiln" "${train[@]}" --runs-root "$work/one" > "$work/one.log" 2>&1
row "one process" 1 "$work/one.log"

"$kiln" launch --nproc 2 -- "${train[@]}" --runs-root "$work/launch" > "$work/launch.log" 2>&1
row "kiln launch --nproc 2" 2 "$work/launch.log"

scripts/torchrun --nproc_per_node 2 --master_port 29631 --no_python "$kiln" "${train[@]}" \
  --runs-root "$work/torchrun" > "$work/torchrun.log" 2>&1
row "torchrun --no_python" 2 "$work/torchrun.log"

cluster='"cluster": {"chief": ["127.0.0.1:29632"], "worker": ["127.0.0.1:29633"]}'
TF_CONFIG="{$cluster, \"task\": {\"type\": \"worker\", \"index\": 0}}" \
  "$kiln" "${train[@]}" --runs-root "$work/tf" > "$work/tf_worker.log" 2>&1 &
TF_CONFIG="{$cluster, \"task\": {\"type\": \"chief\", \"index\": 0}}" \
  "$kiln" "${train[@]}" --runs-root "$work/tf" > "$work/tf.log" 2>&1
wait
row "TF_CONFIG (chief + worker)" 2 "$work/tf.log"

hosts() {
  ip netns add "${netns}a" && ip netns add "${netns}b" &&
    ip link add "${netns}va" type veth peer name "${netns}vb" &&
    ip link set "${netns}va" netns "${netns}a" && ip link set "${netns}vb" netns "${netns}b" &&
    ip -n "${netns}a" addr add 10.231.8.1/24 dev "${netns}va" &&
    ip -n "${netns}b" addr add 10.231.8.2/24 dev "${netns}vb" &&
    ip -n "${netns}a" link set "${netns}va" up && ip -n "${netns}b" link set "${netns}vb" up &&
    ip -n "${netns}a" link set lo up && ip -n "${netns}b" link set lo up
}
if hosts 2> "$work/netns.err"; then
  on_host() {
    ip netns exec "$netns$1" env RANK="$2" WORLD_SIZE=2 MASTER_ADDR=10.231.8.1 MASTER_PORT=29634 \
      KILN_RUN_DIR="$work/hosts/run" "$kiln" "${train[@]}"
  }
  on_host b 1 > "$work/host1.log" 2>&1 &
  on_host a 0 > "$work/hosts.log" 2>&1
  wait
  row "two network namespaces over TCP" 2 "$work/hosts.log"
else
  echo "| two network namespaces over TCP | 2 | not run: $(head -n1 "$work/netns.err") |"
fi
