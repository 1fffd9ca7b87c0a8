#!/bin/sh
# hostlib/umad: the built libibumad.so.3 must export exactly the versioned symbols of the
# system's rdma-core libibumad.so.3 (IBUMAD_1.0..1.2) and carry its SONAME.
# Usage: umad_exports_check.sh <built libibumad.so.3> [<system libibumad.so.3>]
set -eu
ours=$1
real=${2:-/usr/lib/x86_64-linux-gnu/libibumad.so.3}
if [ ! -e "$real" ] || ! command -v objdump >/dev/null; then
  echo "no system libibumad or objdump: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exports() { objdump -T "$1" | awk '$2 == "g" && $0 !~ /\*UND\*/ { print $(NF-1), $NF }' | sort; }
exports "$real" >"$tmp/system"
exports "$ours" >"$tmp/ours"
if ! diff -u "$tmp/system" "$tmp/ours"; then
  echo "exported symbols differ (- system, + ours)"
  exit 1
fi
soname=$(objdump -p "$ours" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libibumad.so.3 ] || { echo "SONAME is '$soname'"; exit 1; }
echo "exports and SONAME match $real"
