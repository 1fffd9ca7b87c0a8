#!/bin/sh
# hostlib/verbs: the built libibverbs.so.1 must export exactly the default versioned symbols of
# rdma-core 44's libibverbs.so.1 (the list Debian 12's 44.0-2 exports, committed as
# tests/data/libibverbs44_exports.txt: version nodes IBVERBS_1.0..1.14 and IBVERBS_PRIVATE_34),
# carry its SONAME, and give verbs_allow_disassociate_destroy its one byte of data, which the
# providers (libmlx5 and friends, loaded by perftest) read. When the system library is installed,
# its list must be the committed one too, so a newer rdma-core shows up here.
# Usage: verbs_exports_check.sh <built libibverbs.so.1> <committed list> [<system libibverbs.so.1>]
set -eu
ours=$1
list=$2
real=${3:-/usr/lib/x86_64-linux-gnu/libibverbs.so.1}
command -v objdump >/dev/null || { echo "no objdump: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Default versions only: objdump puts hidden (compat) versions in parentheses.
exports() { objdump -T "$1" | awk '$2 == "g" && $0 !~ /\*UND\*/ && $0 !~ /\(IBVERBS/ { print $(NF-1), $NF }' | sort; }
exports "$ours" >"$tmp/ours"
if ! diff -u "$list" "$tmp/ours"; then
  echo "exported symbols differ (- rdma-core 44, + ours)"
  exit 1
fi
if [ -e "$real" ]; then
  exports "$real" >"$tmp/system"
  diff -u "$list" "$tmp/system" || { echo "the system's $real differs from $list"; exit 1; }
fi
soname=$(objdump -p "$ours" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libibverbs.so.1 ] || { echo "SONAME is '$soname'"; exit 1; }
objdump -T "$ours" | awk '$NF == "verbs_allow_disassociate_destroy" { print $3, $5 }' >"$tmp/allow"
[ "$(cat "$tmp/allow")" = "DO 0000000000000001" ] ||
  { echo "verbs_allow_disassociate_destroy is '$(cat "$tmp/allow")', not a 1-byte object"; exit 1; }
echo "exports, SONAME and data objects match rdma-core 44"
