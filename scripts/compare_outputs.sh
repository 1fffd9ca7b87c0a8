#!/usr/bin/env bash
# Whether a change kept the model: runs every committed scenario (configs/scenarios, and
# tests/data/scenarios) with this build and with an older binary for the same simulated time, and
# compares every output file but summary.json (which holds the digest, the event count and the
# wall time) byte for byte. Prints one line per scenario, and the scenarios whose event count
# moved; exits 1 if any output differs.
#   scripts/compare_outputs.sh OLD_IBEMU [DURATION]      default 300us
# Scenarios that both binaries refuse as bad input (exit status 2) are listed as refused; any other
# failure counts as a difference, even when both builds fail alike. The 11,664-host
# fabric is left out: it takes minutes to load twice.
set -uo pipefail
OLD=$(realpath "${1:?usage: scripts/compare_outputs.sh OLD_IBEMU [DURATION]}") || exit 2
[ -x "$OLD" ] || { echo "compare_outputs: $OLD is not an executable" >&2; exit 2; }
DUR=${2:-300us}
NEW=$(realpath "${IBEMU:-$(dirname "$0")/../${IBEMU_BUILD_DIR:-build}/emulator/ibemu}")
cd "$(dirname "$0")/.."
TMP=$(realpath "$(mktemp -d)")
trap 'rm -rf "$TMP"' EXIT
same=0 differ=0 moved=0
for s in configs/scenarios/*.yaml configs/scenarios/*/*.yaml tests/data/scenarios/*.yaml; do
  case $s in *11664*) continue ;; esac
  rm -rf "$TMP/a" "$TMP/b"
  "$OLD" run "$s" -q --no-plot --duration "$DUR" -o "$TMP/a" > "$TMP/a.out" 2>&1; ra=$?
  "$NEW" run "$s" -q --no-plot --duration "$DUR" -o "$TMP/b" > "$TMP/b.out" 2>&1; rb=$?
  if [ $ra != 0 ] || [ $rb != 0 ]; then
    if [ $ra = 2 ] && [ $rb = 2 ]; then echo "$s: refused by both"
    else echo "$s: exit status $ra (old) against $rb (new)"; differ=$((differ + 1)); fi
    continue
  fi
  bad=
  for f in $(cd "$TMP/a" && find . -type f ! -name summary.json | sort); do
    cmp -s "$TMP/a/$f" "$TMP/b/$f" || bad="$bad ${f#./}"
  done
  [ -n "$(cd "$TMP/b" && find . -type f ! -name summary.json | sort | while read -r f; do [ -f "$TMP/a/$f" ] || echo x; done)" ] && bad="$bad (files only in the new run)"
  ea=$(grep -o 'events [0-9]*' "$TMP/a.out" | cut -d' ' -f2)
  eb=$(grep -o 'events [0-9]*' "$TMP/b.out" | cut -d' ' -f2)
  if [ -n "$bad" ]; then
    echo "$s: DIFFERS:$bad"; differ=$((differ + 1))
  else
    same=$((same + 1))
    if [ "$ea" != "$eb" ]; then echo "$s: same outputs, events $ea -> $eb"; moved=$((moved + 1))
    else echo "$s: same outputs, same events"; fi
  fi
done
echo "scenarios with the same outputs: $same (events moved in $moved); differing: $differ"
[ $differ = 0 ]
