#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each briefly on its seed corpus:
#   tests/fuzz/run-fuzzers.sh [SECONDS_PER_TARGET]     default 20
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-20}
OUT=${IBEMU_FUZZ_DIR:-build-fuzz}
mkdir -p "$OUT"
CXX="clang++ -std=c++20 -O1 -g -I. -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
# What each target links, beyond its own tests/fuzz/<name>_fuzz.cc.
TOPOLOGY_SRC=(common/topology/ibnetdiscover_parser.cc common/topology/topology.cc
  common/link/link_rate.cc)
BATCH_SRC=(emulator/engine/event_codec.cc emulator/engine/packet.cc)
# The MAD target runs a whole fabric: every emulator source that needs no YAML, ZeroMQ or
# protobuf.
MAD_SRC=(common/mad/*.cc common/link/*.cc common/wire/*.cc emulator/engine/*.cc
  emulator/switch/*.cc emulator/hca/*.cc emulator/mgmt/*.cc common/routing/*.cc
  common/topology/*.cc emulator/policy/*.cc emulator/policy/*/*.cc
  emulator/link/*.cc emulator/cc/*.cc emulator/cc/*/*.cc emulator/fabric/fabric.cc)
# The client protocol (common/transport/umad.proto) into the fabric's UmadService over real
# ZeroMQ sockets: the same fabric sources, the service, and the messages generated here.
mkdir -p "$OUT/gen"
protoc --cpp_out="$OUT/gen" -Icommon/transport common/transport/umad.proto
UMAD_SRC=("${MAD_SRC[@]}" emulator/fabric/umad_service.cc emulator/fabric/local_channel.cc
  emulator/fabric/verbs_requests.cc "$OUT/gen/umad.pb.cc")
# ibemu-ccmgr's policy reader (YAML and opensm.conf).
POLICY_SRC=(cc-manager/policy.cc cc-manager/cct_generator.cc common/mad/opensm_cc_options.cc
  common/mad/cc_settings.cc common/mad/field.cc fabricmgr/subnet.cc)
# Every source is compiled once, on every core, and the targets share the objects: compiling the
# fabric's hundred sources once per target in one clang call took most of CI's fuzzer step.
# Objects keep the sources' tree under $OUT/obj (the generated source under $OUT/obj/gen).
obj() { local rel=${1#"$OUT"/}; echo "$OUT/obj/${rel%.cc}.o"; }
declare -A seen=()
pairs=()
for src in tests/fuzz/{topology,event_batch,mad,umad_client,ccmgr_policy}_fuzz.cc \
  "${TOPOLOGY_SRC[@]}" "${BATCH_SRC[@]}" "${UMAD_SRC[@]}" "${POLICY_SRC[@]}"; do
  [ -n "${seen[$src]:-}" ] && continue
  seen[$src]=1
  o=$(obj "$src")
  mkdir -p "$(dirname "$o")"
  pairs+=("$src" "$o")
done
export CXX OUT
printf '%s\0' "${pairs[@]}" | xargs -0 -P "$(nproc)" -n 2 \
  sh -c '$CXX "-I$OUT/gen" -c "$0" -o "$1"' ||
  { echo "fuzzer build failed" >&2; exit 1; }
link() {  # $1 = target, then its sources, then extra libraries after --
  local name=$1 objs=() libs=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do objs+=("$(obj "$1")"); shift; done
  [ $# -gt 0 ] && shift && libs=("$@")
  $CXX -o "$OUT/${name}_fuzz" "$(obj "tests/fuzz/${name}_fuzz.cc")" "${objs[@]}" \
    ${libs[@]+"${libs[@]}"}
}
link topology "${TOPOLOGY_SRC[@]}"
link event_batch "${BATCH_SRC[@]}"
link mad "${MAD_SRC[@]}"
link umad_client "${UMAD_SRC[@]}" -- -lprotobuf -lzmq -lpthread
link ccmgr_policy "${POLICY_SRC[@]}" -- -lyaml-cpp
# Seed corpora: real topology files, and one valid batch the codec wrote.
mkdir -p "$OUT/corpus/topology" "$OUT/corpus/batch" "$OUT/corpus/mad" "$OUT/corpus/umad"
# Policies: the committed ones and the refused ones, behind their format byte (1 YAML, 0 conf).
mkdir -p "$OUT/corpus/policy"
for f in configs/ccmgr/*.yaml tests/data/ccmgr/*.yaml; do
  { printf '\x01'; cat "$f"; } > "$OUT/corpus/policy/$(basename "$f")"
done
for f in configs/ccmgr/*.conf tests/data/ccmgr/*.conf; do
  { printf '\x00'; cat "$f"; } > "$OUT/corpus/policy/$(basename "$f")"
done
# A directed-route NodeInfo Get one hop out, sent from H1; and a PerfMgt PortCounters Get.
printf '\x01\x01\x81\x01\x01\x00\x00\x00\x01' > "$OUT/corpus/mad/dr_nodeinfo"
printf '\x02\x01\x04\x01\x01' > "$OUT/corpus/mad/perf"
cp configs/topologies/*.topo tests/data/topologies/*.topo "$OUT/corpus/topology/"
printf '\x01\x00\x00\x00\xe8\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' > "$OUT/corpus/batch/empty"
# Client 0 attaches to H1 port 1 (handle 1) and claims IsSM;
# client 1 queries a node that does not exist; client 2 detaches a handle it never had.
printf '\x08\x0c\x00\x08\x01\x1a\x08\x0a\x02H1\x10\x01\x18\x01' > "$OUT/corpus/umad/attach"
printf '\x00\x06\x00\x32\x04\x08\x01\x10\x01' > "$OUT/corpus/umad/issm"
printf '\x09\x07\x00\x08\x02\x12\x03\x0a\x01X' > "$OUT/corpus/umad/query"
printf '\x0a\x04\x00\x2a\x02\x08\x07' > "$OUT/corpus/umad/detach"
# Regression: an Attach to port 2^31 (once taken as port -2^31), then IsSM on its handle.
printf '\x08\x10\x00\x08\x01\x1a\x0c\x0a\x02H1\x10\x80\x80\x80\x80\x08\x18\x01\x00\x06\x00\x32\x04\x08\x01\x10\x01' \
  > "$OUT/corpus/umad/attach_port_2_31"
for t in topology:topology event_batch:batch mad:mad umad_client:umad ccmgr_policy:policy; do
  name=${t%%:*} corpus=${t##*:}
  echo "== fuzzing $name for ${SECS}s =="
  if ! "$OUT/${name}_fuzz" -max_total_time="$SECS" -print_final_stats=1 \
      -artifact_prefix="$OUT/" "$OUT/corpus/$corpus" \
      > "$OUT/$name.log" 2>&1; then
    tail -40 "$OUT/$name.log"
    echo "fuzzer $name found a crash (reproducer above, crash-* files in $OUT)" >&2
    exit 1
  fi
  grep -E 'stat::number_of_executed_units|stat::peak_rss' "$OUT/$name.log" || true
done
echo "fuzzers: no crash"
