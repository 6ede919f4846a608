#!/usr/bin/env bash
# Installs every Debian package kiln needs to build, test, run the demo and the benchmarks
# (DESIGN.md §1). Idempotent: packages already present are skipped, and apt is not touched at all
# when nothing is missing, so `make test` stays fast on a prepared machine.
set -euo pipefail

packages=(
  # build
  cmake ninja-build ccache mold g++ make pkg-config clang-format
  # tensors, autograd, c10d
  libtorch-dev libgloo-dev libopenblas0-pthread
  # config, command line, logging
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  # serving, formats, images, compression, storage
  libcpp-httplib-dev libprotobuf-dev protobuf-compiler libstb-dev libturbojpeg0-dev zlib1g-dev libsqlite3-dev
  # kiln board's charts
  libjs-chart.js
  # tests and micro-benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # kiln board's page, opened by the tests in a real browser
  chromium
  # fuzzing the torch-free parsers (make fuzz): clang, its sanitizer runtimes and libFuzzer
  clang libclang-rt-14-dev libfuzzer-14-dev
  # real data
  dataset-fashion-mnist
  # peer for the benchmarks and golden-value generators (never linked)
  python3-torch python3-sklearn python3-torchvision python3-numpy python3-pandas
  # the serving benchmark: its Python peer (Flask under gunicorn) and the load generator
  python3-flask gunicorn wrk curl
  # the tuning benchmark's peer: Optuna's TPE sampler
  python3-optuna
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
