#!/usr/bin/env bash
# Checks that docs/architecture.md names every registry `kiln list` has, and no other: the line
# that begins "The registries are" lists each one's name in backquotes. Then it checks itself:
# a map that leaves one out must make it fail.
#
#   tests/deps/registry_map_test.sh KILN [ROOT]   KILN: the kiln binary; ROOT: the repository
set -uo pipefail

kiln="$1"
root="${2:-$(cd "$(dirname "$0")/../.." && pwd)}"

# The registries' names, one a line, sorted: from `kiln list`'s headings ("layer: ...").
registries="$("$kiln" list | sed -n -E 's/^([a-z_]+): .*/\1/p' | sort)"
if [[ -z "$registries" ]]; then
  echo "kiln list printed no registry"
  exit 1
fi

# The names the map's sentence gives, from its first line to the full stop that ends it.
named_in() {
  awk '/^The registries are/ { on = 1 } on { print } on && /\.( |$)/ { exit }' "$1" |
    grep -o -E '`[a-z_]+`' | tr -d '`' | sort -u
}

# Compares the names in MAP with the registries; prints each difference, returns 1 if any.
check() {
  local named
  named="$(named_in "$1")"
  if [[ "$named" != "$registries" ]]; then
    diff <(echo "$registries") <(echo "$named") | sed -n -E \
      -e 's/^< (.*)/registry "\1" is missing from the map'"'"'s "The registries are" sentence/p' \
      -e 's/^> (.*)/the map names "\1", which kiln list does not have/p'
    return 1
  fi
}

status=0
check "$root/docs/architecture.md" || status=1

scratch="$(mktemp)"
trap 'rm -f "$scratch"' EXIT
echo "The registries are $(echo "$registries" | tail -n +2 | sed 's/.*/`&`/' | paste -sd, -)." >"$scratch"
if check "$scratch" >/dev/null; then
  echo "self-check: a map without \"$(echo "$registries" | head -1)\" was not refused"
  status=1
fi

[[ $status == 0 ]] && echo "registry map: ok ($(echo "$registries" | wc -l) registries)"
exit "$status"
