#!/usr/bin/env bash
# Builds kiln with CUDA on a GPU machine that has CUDA, CMake, ninja, g++ and PyTorch (whose
# LibTorch, with CUDA, cuDNN and NCCL, kiln builds against) but no package registry (docs/gpu.md).
#
#   scripts/gpu-build.sh download      on a Debian bookworm machine with apt: fetches the .deb
#                                      files of the C++ libraries kiln uses into gpu-deps/
#                                      (git-ignored), to be copied to the GPU machine with the tree
#   scripts/gpu-build.sh build [DIR [TARGET...]]
#                                      on the GPU machine: unpacks them into a prefix and builds
#                                      kiln into DIR (default build-gpu): everything, or TARGETs
#   scripts/gpu-build.sh env           prints the exports that kiln and its tests need to run there
#   scripts/gpu-build.sh install-data  puts Fashion-MNIST under /usr/share/datasets (needs root)
#
# The .debs are unpacked with `dpkg -x` into KILN_GPU_PREFIX (default /tmp/kiln-gpu-prefix), never
# into /, so the machine's own libraries stay as they are. The same CMakeLists builds the CPU and
# the CUDA kiln: which one is LibTorch's choice.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
deps="${KILN_GPU_DEPS:-$root/gpu-deps}"
prefix="${KILN_GPU_PREFIX:-/tmp/kiln-gpu-prefix}"
multiarch=x86_64-linux-gnu

# The lines of scripts/packages.txt marked gpu or gpu-only: the C++ libraries with the runtime
# libraries and .pc files they need, the tests' and examples' data, kiln board's Chart.js.
mapfile -t packages < <("$root/scripts/packages.sh" gpu)

download() {
  mkdir -p "$deps"
  (cd "$deps" && apt-get download "${packages[@]}")
}

print_env() {
  local lib="$prefix/usr/lib/$multiarch"
  echo "export PATH=\"$prefix/usr/bin:\$PATH\""
  echo "export LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
  echo "export PKG_CONFIG_LIBDIR=\"$lib/pkgconfig:$prefix/usr/share/pkgconfig\""
  echo "export PKG_CONFIG_SYSROOT_DIR=\"$prefix\""
  # CMake reads this too: the tests that build a project against an installed kiln find LibTorch
  # and the unpacked libraries as kiln's own build did.
  echo "export CMAKE_PREFIX_PATH=\"$(torch_prefix):$prefix/usr\""
}

unpack() {
  local debs=("$deps"/*.deb)
  [ -e "${debs[0]}" ] || { echo "gpu-build: no .deb files in $deps (run '$0 download' first)" >&2; exit 1; }
  mkdir -p "$prefix"
  for deb in "${debs[@]}"; do dpkg -x "$deb" "$prefix"; done
}

# Fashion-MNIST's files under /usr/share/datasets and Chart.js under /usr/share/javascript, as
# Debian's packages place them; nothing else of / is touched.
install_data() {
  dpkg -x "$deps"/dataset-fashion-mnist_*.deb /
  dpkg -x "$deps"/libjs-chart.js_*.deb /
}

torch_prefix() { python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'; }

build() {
  local dir="${1:-$root/build-gpu}"
  shift || true
  local targets=()
  [ $# -eq 0 ] || targets=(--target "$@")
  unpack
  eval "$(print_env)"
  # Without gRPC (packages.txt marks it gpu:optional): the GPU machine serves REST only.
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_GRPC=OFF \
    -DProtobuf_PROTOC_EXECUTABLE="$prefix/usr/bin/protoc" \
    -DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf"
  cmake --build "$dir" "${targets[@]}" -- -k 0
}

case "${1:-}" in
  download) download ;;
  build) shift; build "$@" ;;
  env) print_env ;;
  install-data) install_data ;;
  *) echo "usage: $0 download | build [DIR [TARGET...]] | env | install-data" >&2; exit 2 ;;
esac
