#!/usr/bin/env bash
# Checks scripts/packages.txt, the one list of kiln's Debian packages, against the CMake files:
#   - every find_package, pkg_check_modules module, find_library, find_path and find_program of
#     the CMake files is answered by a `cmake:NAME` mark of some line;
#   - every line with a cmake: mark has a gpu mark, and one marked gpu is in what
#     scripts/gpu-build.sh downloads (scripts/packages.sh gpu): the GPU build finds it too;
#   - every package scripts/install-deps.sh installs is installed here.
# Then it checks itself: a CMake file with a look-up nobody answers must make it fail.
#
#   tests/deps/package_list_test.sh [ROOT]     ROOT: the repository (default: this file's)
set -uo pipefail

root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
list="$root/scripts/packages.txt"

# The names the CMake files look up, one a line. `kiln` itself (the example built against an
# installed kiln) is the project, not a package.
cmake_lookups() {
  find "$@" \( -name CMakeLists.txt -o -name '*.cmake' \) -not -path '*/build*' -print0 |
    xargs -0 cat |
    sed -n -E \
      -e 's/.*find_package\(([A-Za-z0-9_.+-]+).*/\1/p' \
      -e 's/.*pkg_check_modules\([A-Za-z0-9_]+(( REQUIRED| QUIET| IMPORTED_TARGET))* ([A-Za-z0-9_.+-]+).*/\3/p' \
      -e 's/.*find_(library|program)\([A-Za-z0-9_]+ ([A-Za-z0-9_.+-]+).*/\2/p' \
      -e 's/.*find_path\([A-Za-z0-9_]+ ([A-Za-z0-9_.+-]+).*/\1/p' |
    grep -v -x kiln | sort -u
}

# Checks ROOT's CMake files against LIST; prints each problem, returns 1 if any.
check() {
  local list="$1"
  shift
  local problems=0 name
  for name in $(cmake_lookups "$@"); do
    if ! awk -v want="cmake:$name" '!/^[ \t]*#/ { for (i = 2; i <= NF; ++i) if ($i == want) found = 1 }
                                    END { exit !found }' "$list"; then
      echo "no line of scripts/packages.txt answers the CMake look-up '$name' (add cmake:$name)"
      problems=1
    fi
  done
  local line
  while read -r line; do
    echo "$line"
    problems=1
  done < <(awk '!/^[ \t]*(#|$)/ {
                  cmake = 0; gpu = 0
                  for (i = 2; i <= NF; ++i) { if ($i ~ /^cmake:/) cmake = 1; if ($i ~ /^gpu/) gpu = 1 }
                  if (cmake && !gpu) print "scripts/packages.txt: " $1 " answers a CMake look-up but has no gpu mark"
                }' "$list")
  return $problems
}

failed=0
if ! check "$list" "$root/CMakeLists.txt" "$root/cmake" "$root/tests" "$root/examples"; then
  failed=1
fi

# What the GPU build downloads holds every package marked gpu (the two scripts read one list).
gpu_list=$("$root/scripts/packages.sh" gpu)
for name in $(awk '!/^[ \t]*#/ { for (i = 2; i <= NF; ++i) if ($i == "gpu") print $1 }' "$list"); do
  grep -q -x -F "$name" <<<"$gpu_list" || { echo "scripts/packages.sh gpu leaves out $name"; failed=1; }
done
grep -q -x libsqlite3-dev <<<"$gpu_list" || { echo "the GPU build lacks SQLite"; failed=1; }

# install-deps.sh ran before the build: everything it installs is here.
for name in $("$root/scripts/packages.sh" install); do
  dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed" ||
    { echo "$name is in scripts/packages.txt but not installed (scripts/install-deps.sh)"; failed=1; }
done

# The check must catch a look-up nobody answers.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf 'find_package(Bogus REQUIRED)\npkg_check_modules(X REQUIRED IMPORTED_TARGET nowhere-lib)\n' \
  > "$scratch/CMakeLists.txt"
caught=$(check "$list" "$scratch")
for name in Bogus nowhere-lib; do
  grep -q "'$name'" <<<"$caught" || { echo "the check did not catch find_package($name)"; failed=1; }
done

if [ $failed -eq 0 ]; then
  echo "package list: $(cmake_lookups "$root/CMakeLists.txt" "$root/cmake" "$root/tests" "$root/examples" | wc -l) CMake look-ups answered, GPU list complete"
fi
exit $failed
