# Sourced by the scripts run on the GPU machine (gpu-checks.sh, gpu-recipe.sh): a time budget,
# the output folder ($OUT) and its summary.txt, Fashion-MNIST where the tests and examples look
# for it, and kiln built into build-gpu with its environment.

# gpu_begin NAME SECONDS: starts the clock; the output goes to $OUT or ./NAME-out.
gpu_begin() {
  begun=$(date +%s)
  budget="$2"
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  out="${OUT:-$root/$1-out}"
  mkdir -p "$out"
  cd "$root" || exit 1
  scripts/gpu-build.sh install-data
  summary="$out/summary.txt"
  : > "$summary"
}

# Seconds left of the budget.
left() { echo $((budget - ($(date +%s) - begun))); }

note() { echo "$*" >> "$summary"; }

# gpu_build [TARGET...]: builds kiln (or TARGETs) into build-gpu unless a kiln is there, writing
# the build's output to build.txt, then takes the environment kiln runs in.
gpu_build() {
  if [ ! -x build-gpu/kiln ]; then
    timeout "$(left)" scripts/gpu-build.sh build build-gpu "$@" > "$out/build.txt" 2>&1
    note "build: exit $? at $(($(date +%s) - begun)) s"
  fi
  eval "$(scripts/gpu-build.sh env)"
  kiln="$root/build-gpu/kiln"
}
