#!/usr/bin/env bash
# Serving: `kiln serve` against the same model in PyTorch behind Flask under gunicorn (2 worker
# processes, 1 torch thread each), on this machine, driven by wrk at several concurrencies; and
# kiln's gRPC API (--grpc-port) on the same server, driven with the same image as a Predict call by
# h2load (nghttp2's HTTP/2 load generator) and by benchmarks/grpc_load.cpp (a C++ gRPC load client
# as lean as wrk, built here): one connection carrying as many calls at once as the concurrency,
# as a gRPC client's channel carries them (HTTP/1.1 has one request at a time per connection, so
# wrk opens as many connections). Each load client's CPU per call is measured too: on two cores
# it is taken from the server.
#
#   benchmarks/serve.sh [RUNS] [SECONDS] [CONCURRENCY...]     default: 3 10 1 8 32
#
# The model is configs/examples/fashion_mnist/cnn.yaml's CNN after one training step, exported
# by `kiln export`; the Python server loads the same weights. Each request is one Fashion-MNIST
# test image in TensorFlow Serving's row form; both answer class_ids, classes, probabilities and
# logits. At each concurrency the loads alternate RUNS times for SECONDS each; the table shows the median requests/s, p50 and p99 latency, the mean size of the batches
# kiln formed, and the ratios. Below it, the limit of the hardware: offline images/s for the same
# model at batch 1 to 32, by `kiln eval` (the model as trained) and by `kiln predict` of the
# export (the model as served: optimized for inference, export/exported_model.h).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
seconds=${2:-10}
shift 2 2>/dev/null || shift $#
concurrencies=("$@")
[ ${#concurrencies[@]} -eq 0 ] && concurrencies=(1 8 32)
kiln=${KILN:-build/kiln}
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
kiln_port=8610 peer_port=8611 grpc_port=8612
cleanup() {
  [ -n "${kiln_pid:-}" ] && kill "$kiln_pid" 2>/dev/null || true
  [ -n "${peer_pid:-}" ] && kill "$peer_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The model: one training step, exported.
"$kiln" train configs/examples/fashion_mnist/cnn.yaml --runs-root "$work/runs" \
  --set "train.max=1 step" --set data.val_fraction=0 --set train.monitor=train/loss > "$work/train.out"
run=$(sed -n 's/^run: //p' "$work/train.out")
"$kiln" export "$run" --to "$work/exports" > /dev/null
version="$work/exports/fashion_cnn/1"
g++ -O2 -std=c++17 benchmarks/grpc_load.cpp -lnghttp2 -o "$work/grpc_load"

# One request: the first test image, pixels in [0, 1] as the dataset gives them.
"$python" - "$work/request.json" <<'PY'
import gzip, json, sys
with gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz") as f:
    pixels = f.read()[16:16 + 784]
image = [[[round(pixels[r * 28 + c] / 255, 4) for c in range(28)] for r in range(28)]]
json.dump({"instances": [image]}, open(sys.argv[1], "w"))
PY
cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local file = io.open("$work/request.json", "r")
wrk.body = file:read("*a")
file:close()
LUA

"$kiln" serve "$work/exports/fashion_cnn" --port "$kiln_port" --grpc-port "$grpc_port" \
  > "$work/kiln.log" 2>&1 &
kiln_pid=$!
KILN_EXPORT="$version" "$python" -m gunicorn -w 2 -b "127.0.0.1:$peer_port" \
  --chdir benchmarks/peers serve_flask:app > "$work/peer.log" 2>&1 &
peer_pid=$!
url() { echo "http://127.0.0.1:$1/v1/models/fashion_cnn:predict"; }
for port in $kiln_port $peer_port; do  # both answer before any timing
  for _ in $(seq 100); do
    curl -sf -X POST -d @"$work/request.json" "$(url $port)" > /dev/null && break
    sleep 0.2
  done
done
# The same request as a gRPC Predict call, framed as gRPC frames a message (a 0 byte, then the
# length in 4 bytes big-endian): the image as tensor_content, as tf.make_tensor_proto writes it.
curl -s "http://127.0.0.1:$kiln_port/v1/models/fashion_cnn/metadata" > "$work/metadata.json"
"$python" - "$work/request.json" "$work/metadata.json" "$work/request.grpc" <<'PY'
import json, struct, sys
def field(number, payload):
    size, varint = len(payload), b""
    while True:
        varint += bytes([(size & 0x7f) | (0x80 if size >= 0x80 else 0)])
        size >>= 7
        if not size:
            break
    return bytes([number << 3 | 2]) + varint + payload
def dims(shape):  # each a Dim { size: N }, N under 128: one byte
    return b"".join(field(2, b"\x08" + bytes([size])) for size in shape)
image = json.load(open(sys.argv[1]))["instances"][0]
signature = json.load(open(sys.argv[2]))["metadata"]["signature_def"]["signature_def"]
name = next(iter(signature["serving_default"]["inputs"])).encode()
values = [v for plane in image for row in plane for v in row]
tensor = b"\x08\x01" + field(2, dims([1, 1, 28, 28])) + field(4, struct.pack("<784f", *values))
request = field(1, field(1, b"fashion_cnn")) + field(2, field(1, name) + field(2, tensor))
open(sys.argv[3], "wb").write(b"\x00" + struct.pack(">I", len(request)) + request)
PY

# The gRPC call answers OK (its status comes in the trailers, which curl's -D writes too): h2load
# counts every HTTP/2 answer, failed calls included.
curl -s --http2-prior-knowledge -H "content-type: application/grpc" -H "te: trailers" \
  --data-binary @"$work/request.grpc" -D "$work/grpc.headers" -o /dev/null \
  "http://127.0.0.1:$grpc_port/tensorflow.serving.PredictionService/Predict"
if ! grep -qi "^grpc-status: 0" "$work/grpc.headers"; then
  echo "the gRPC Predict call failed:" >&2
  cat "$work/grpc.headers" >&2
  exit 1
fi

# The client's CPU time per call in microseconds, from /usr/bin/time's "%U %S" in $1 and the
# rate over the run.
client_us() { awk -v rate="$2" -v s="$seconds" '{printf "%.0f", ($1 + $2) * 1e6 / (rate * s)}' "$1"; }

# wrk's requests/s, p50 and p99 in ms.
load() {
  /usr/bin/time -f "%U %S" -o "$work/client.time" wrk -t "$(( $2 < 2 ? 1 : 2 ))" -c "$2" -d "${seconds}s" --latency -s "$work/post.lua" "$(url "$1")" |
    awk '
      function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; return v * 1000 }
      /Requests\/sec/ { rate = $2 }
      /^ +50%/ { p50 = ms($2) }
      /^ +99%/ { p99 = ms($2) }
      /Non-2xx/ { bad = $NF }
      END { printf "%s %s %s %s\n", rate, p50, p99, bad + 0 }'
}

# h2load's requests/s and mean latency in ms of gRPC Predict calls, and how many failed.
load_grpc() {
  /usr/bin/time -f "%U %S" -o "$work/client.time" h2load -c 1 -m "$1" -t 1 -D "$seconds" -d "$work/request.grpc" \
    -H "content-type: application/grpc" -H "te: trailers" \
    "http://127.0.0.1:$grpc_port/tensorflow.serving.PredictionService/Predict" |
    awk '
      function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; return v * 1000 }
      /^finished in/ { rate = $4 }
      /^requests:/ { bad = $10 + $12 }
      /^time for request:/ { mean = ms($6) }
      END { printf "%s %s %s\n", rate, mean, bad + 0 }'
}

# grpc_load's calls/s, mean latency in ms and failed calls.
load_grpc_lean() {
  /usr/bin/time -f "%U %S" -o "$work/client.time" "$work/grpc_load" 127.0.0.1 "$grpc_port" \
    /tensorflow.serving.PredictionService/Predict "$work/request.grpc" "$1" "$seconds"
}

# The examples and the batches kiln's batcher has run so far (its Prometheus metrics).
batch_totals() {
  curl -s "http://127.0.0.1:$kiln_port/monitoring/prometheus/metrics" |
    awk '/^kiln_serving_batch_examples_sum/ {s = $2} /^kiln_serving_batch_examples_count/ {n = $2}
         END {printf "%d %d", s, n}'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "| concurrency | kiln req/s | kiln p50 ms | kiln p99 ms | kiln images per batch | Flask req/s | Flask p50 ms | Flask p99 ms | req/s kiln/Flask | kiln gRPC req/s (h2load) | gRPC mean ms | req/s gRPC/REST | kiln gRPC req/s (grpc_load) | req/s gRPC/REST |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for c in "${concurrencies[@]}"; do
  : > "$work/kiln.$c"; : > "$work/peer.$c"; : > "$work/grpc.$c"; : > "$work/lean.$c"
  for i in $(seq "$runs"); do
    batches_before=$(batch_totals)
    load $kiln_port "$c" >> "$work/kiln.$c"
    echo "$batches_before $(batch_totals)" >> "$work/batches.$c"
    echo "$(client_us "$work/client.time" "$(tail -n1 "$work/kiln.$c" | cut -d' ' -f1)")" >> "$work/wrk_us.$c"
    load_grpc "$c" >> "$work/grpc.$c"
    echo "$(client_us "$work/client.time" "$(tail -n1 "$work/grpc.$c" | cut -d' ' -f1)")" >> "$work/h2load_us.$c"
    load_grpc_lean "$c" >> "$work/lean.$c"
    echo "$(client_us "$work/client.time" "$(tail -n1 "$work/lean.$c" | cut -d' ' -f1)")" >> "$work/lean_us.$c"
    load $peer_port "$c" >> "$work/peer.$c"
    echo "c=$c run $i: kiln $(tail -n1 "$work/kiln.$c"), grpc $(tail -n1 "$work/grpc.$c")," \
      "grpc_load $(tail -n1 "$work/lean.$c"), flask $(tail -n1 "$work/peer.$c")" >&2
  done
  col() { awk -v n="$2" '{print $n}' "$1" | median; }
  kr=$(col "$work/kiln.$c" 1) k50=$(col "$work/kiln.$c" 2) k99=$(col "$work/kiln.$c" 3)
  pr=$(col "$work/peer.$c" 1) p50=$(col "$work/peer.$c" 2) p99=$(col "$work/peer.$c" 3)
  gr=$(col "$work/grpc.$c" 1) gm=$(col "$work/grpc.$c" 2) lr=$(col "$work/lean.$c" 1)
  kb=$(awk '{s += $3 - $1; n += $4 - $2} END {printf "%.1f", n ? s / n : 0}' "$work/batches.$c")
  awk -v c="$c" -v kr="$kr" -v k50="$k50" -v k99="$k99" -v kb="$kb" -v pr="$pr" -v p50="$p50" \
    -v p99="$p99" -v gr="$gr" -v gm="$gm" -v lr="$lr" \
    'BEGIN { printf "| %s | %.0f | %.2f | %.2f | %s | %.0f | %.2f | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %.2f |\n",
                    c, kr, k50, k99, kb, pr, p50, p99, kr / pr, gr, gm, gr / kr, lr, lr / kr }'
done
failed=$(awk '{s += $4} END {print s + 0}' "$work"/kiln.* "$work"/peer.*)
failed_grpc=$(awk '{s += $3} END {print s + 0}' "$work"/grpc.* "$work"/lean.*)
echo
echo "non-2xx answers in all runs: $failed; gRPC calls h2load and grpc_load counted as failed: $failed_grpc"
echo
echo "| concurrency | client CPU per call, µs (medians): wrk | h2load | grpc_load |"
echo "|---|---|---|---|"
for c in "${concurrencies[@]}"; do
  echo "| $c | $(median < "$work/wrk_us.$c") | $(median < "$work/h2load_us.$c") | $(median < "$work/lean_us.$c") |"
done

echo
echo "| offline limit: test set (10000 images) at batch | kiln eval images/s | kiln predict (as served) images/s |"
echo "|---|---|---|"
for batch in 1 4 8 16 32; do
  "$kiln" train configs/examples/fashion_mnist/cnn.yaml --runs-root "$work/offline" \
    --set "train.max=1 step" --set data.val_fraction=0 --set train.monitor=train/loss \
    --set "data.eval_batch_size=$batch" > "$work/offline.out"
  offline_run=$(sed -n 's/^run: //p' "$work/offline.out")
  rate=$("$kiln" eval "$offline_run" --split test 2>&1 >/dev/null |
    sed -n 's/^test: .*, \([0-9.]*\) examples\/s$/\1/p')
  served=$("$kiln" predict "$version" --batch "$batch" --output /dev/null \
    --input /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz 2>&1 |
    sed -n 's/^predicted .* s, \([0-9.]*\) examples\/s$/\1/p')
  echo "| $batch | $rate | $served |"
done
