#!/usr/bin/env bash
# Management plane, side by side with ibsim (Debian ibsim-utils) on the same ibnetdiscover-format
# file (default: the 648-node fat tree): wall time from starting the simulator to a complete
# ibnetdiscover, ibnetdiscover alone on a running fabric, and from starting OpenSM to SUBNET UP;
# and the CPU time the simulator and OpenSM each use while OpenSM brings a running fabric up.
#   bench/mgmt_bench.sh [TOPOLOGY_FILE]
# Needs a build (scripts/build.sh) and the packages of scripts/install-deps.sh.
# With RTT=1 OpenSM's sweeps on a fabric that is up (the "opensm start to SUBNET UP" row) run with
# bench/umad_rtt.cc preloaded on both sides, and each sweep's MAD round trips as OpenSM saw them
# are printed at the end; the timer's own work is then in those rows' times. bench/sim_residence.cc
# is then preloaded into the simulators that serve those sweeps (and the ibnetdiscover runs before
# them), and how long MADs stayed inside each is printed too, a socket a line: for ibemu a tool
# run, for ibsim (which keeps a socket per client slot) every tool of the round.
# With BURN_US=X ibemu's fabric of the first part of each round (its ibnetdiscover runs and
# OpenSM's sweep) spins X microseconds more for each MAD it takes in (bench/sim_residence.cc);
# ibsim's rows are unaffected. Against a run without, how much OpenSM's time depends on the
# fabric's CPU a MAD. A diagnostic: those rows are then not this fabric's.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${IBEMU_BUILD_DIR:-build}/emulator/ibemu
WORK=$(mktemp -d /tmp/ibemu-mgmt-bench.XXXXXX)
SLEEPER=
trap '[ -n "$SLEEPER" ] && kill $SLEEPER 2>/dev/null; pkill -f "$WORK" 2>/dev/null || true; rm -rf "$WORK"' EXIT
TOPO=${1:-$WORK/ft648.topo}
[ -f "$TOPO" ] || "$B" topology configs/scenarios/bench/fat-tree-648-uniform80.yaml > "$TOPO"
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
osm_conf() {  # $1 dir
  opensm -c "$1/osm.conf" > /dev/null 2>&1
  sed -i 's/^force_log_flush .*/force_log_flush TRUE/' "$1/osm.conf"
}
# Every wait is bounded: a fabric, simulator or SM that never comes up fails the benchmark with a
# message instead of hanging it.   wait_for SECONDS WHAT COMMAND...
wait_for() {
  local limit=$1 what=$2 t0
  shift 2
  t0=$(now)
  until "$@" > /dev/null 2>&1; do
    if [ "$(echo "$(now) - $t0 > $limit" | bc)" -eq 1 ]; then
      echo "mgmt_bench: gave up after ${limit} s waiting for $what" >&2
      exit 1
    fi
    sleep 0.02
  done
}
# The wait for SUBNET UP, during the OpenSM rows, starts no process. As a wait_for it started four
# (grep, sleep, date, bc) every 20 ms on the two cores OpenSM and the simulator share; perf sched
# put a similar loop (grep and sleep every 5 ms) at a tenth of a core. Bash builtins
# only: the log read on from where it was (a line still being written is kept until its end
# comes), and a 5 ms nap as a read with a timeout on a pipe that nothing writes (opened for
# reading and writing, so the read never sees its end). Microseconds as EPOCHREALTIME's digits:
# its separator is the locale's.
exec {NAP_FD}<> <(:)
nap() { read -r -t "$1" -u "$NAP_FD" _ || true; }
wait_up() {  # $1 = OpenSM's log
  local line part='' fd='' t0=${EPOCHREALTIME//[!0-9]/}
  while :; do
    if [ -z "$fd" ] && [ -e "$1" ]; then exec {fd}< "$1"; fi
    if [ -n "$fd" ]; then
      while IFS= read -r -u "$fd" line; do
        line=$part$line
        part=''
        if [[ $line == *"SUBNET UP"* ]]; then
          exec {fd}<&-
          return 0
        fi
      done
      part+=$line
    fi
    if ((${EPOCHREALTIME//[!0-9]/} - t0 > 120000000)); then
      echo "mgmt_bench: gave up after 120 s waiting for SUBNET UP in $1" >&2
      exit 1
    fi
    nap 0.005
  done
}
HOST=$(awk '/^Ca/ {gsub(/"/, "", $3); print $3; exit}' "$TOPO")
# CPU seconds (user + system, all threads) a process has used so far: on two cores the
# simulator's CPU during OpenSM's sweep is CPU that OpenSM's threads do not get
# (docs/performance.md, "The short MAD path").
TCK=$(getconf CLK_TCK)
cpu_of() { awk -v t="$TCK" '{printf "%.3f\n", ($14 + $15) / t}' "/proc/$1/stat"; }
user_cpu_of() { awk -v t="$TCK" '{printf "%.3f\n", $14 / t}' "/proc/$1/stat"; }
ROUNDS=${ROUNDS:-3}
E_RTT=() S_PRELOAD='' E_SIM=() S_SIM=()
bench_so() {  # $1 = the library's name: its path, or a failure naming it
  local so
  so=$(realpath "${IBEMU_BUILD_DIR:-build}/bench/lib$1.so")
  [ -f "$so" ] || { echo "mgmt_bench: RTT=1 and BURN_US need $so (scripts/build.sh)" >&2; exit 1; }
  echo "$so"
}
if [ "${RTT:-0}" = 1 ]; then
  RTT_SO=$(bench_so ibemu_umad_rtt)
  E_RTT=(env "LD_PRELOAD=$RTT_SO" "IBEMU_RTT_OUT=$WORK/rtt.ibemu")
  S_PRELOAD=" $RTT_SO"
  S_SIM=(env "LD_PRELOAD=$(bench_so ibemu_sim_residence)" "IBEMU_SIM_RES_OUT=$WORK/res.ibsim")
fi
if [ "${RTT:-0}" = 1 ] || [ -n "${BURN_US:-}" ]; then
  E_SIM=(env "LD_PRELOAD=$(bench_so ibemu_sim_residence)" "IBEMU_SIM_RES_OUT=$WORK/res.ibemu")
  [ -n "${BURN_US:-}" ] && E_SIM+=("IBEMU_SIM_BURN_US=$BURN_US")
fi
DISC=${DISC:-5}
echo "topology: $TOPO ($(grep -c '^Switch' "$TOPO") switches, $(grep -c '^Ca' "$TOPO") CAs); tools on $HOST"
echo "$ROUNDS rounds, ibnetdiscover $DISC times a round; medians"
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
E_FIRST=() E_DISC=() E_EXEC=() E_SM=() E_START_SM=() S_FIRST=() S_DISC=() S_SM=() S_START_SM=()
E_SIM_CPU=() E_OSM_CPU=() S_SIM_CPU=() S_OSM_CPU=() E_SIM_USER=() S_SIM_USER=()

# --- ibemu: the fabric with its data plane, ports waiting for an SM ---
export IBEMU_RUN_DIR=$WORK/ibemu
mkdir -p "$IBEMU_RUN_DIR"
ibemu_round() {
  local t0 i fabric c0 u0
  t0=$(now)
  "${E_SIM[@]}" "$B" up "$TOPO" --sm external -q -o "$IBEMU_RUN_DIR/res" > "$IBEMU_RUN_DIR/up.log" 2>&1 &
  fabric=$!
  wait_for 120 "ibnetdiscover on the fabric" \
    sh -c '"$0" exec --port "$1:1" -- ibnetdiscover > "$2"' "$B" "$HOST" "$IBEMU_RUN_DIR/disc"
  E_FIRST+=("$(since "$t0")")
  # The tool alone, in the environment `ibemu exec` gives it, as ibsim's side runs it under
  # LD_PRELOAD; and through `ibemu exec`, which adds the start of one more process.
  local env_of_exec
  mapfile -t env_of_exec < <("$B" exec --port "$HOST:1" -- env | grep -E '^(LD_LIBRARY_PATH|IBEMU_[A-Z_]+)=')
  for ((i = 0; i < DISC; i++)); do
    t0=$(now); env "${env_of_exec[@]}" ibnetdiscover > /dev/null; E_DISC+=("$(since "$t0")")
    t0=$(now); "$B" exec --port "$HOST:1" -- ibnetdiscover > /dev/null; E_EXEC+=("$(since "$t0")")
  done
  osm_conf "$IBEMU_RUN_DIR"
  rm -f "$IBEMU_RUN_DIR/osm.log"
  c0=$(cpu_of "$fabric") u0=$(user_cpu_of "$fabric")
  t0=$(now)
  OSM_CACHE_DIR=$IBEMU_RUN_DIR "$B" exec --port "$HOST:1" -- "${E_RTT[@]}" opensm \
    -F "$IBEMU_RUN_DIR/osm.conf" -f "$IBEMU_RUN_DIR/osm.log" > /dev/null 2>&1 &
  local osm=$!  # `ibemu exec` becomes the tool (execvp): the same process
  wait_up "$IBEMU_RUN_DIR/osm.log"; E_SM+=("$(since "$t0")")
  E_SIM_CPU+=("$(echo "$(cpu_of "$fabric") - $c0" | bc)")
  E_SIM_USER+=("$(echo "$(user_cpu_of "$fabric") - $u0" | bc)")
  E_OSM_CPU+=("$(cpu_of "$osm")")
  e_ports=$(grep -c '^\[' "$IBEMU_RUN_DIR/disc")
  pkill -f "opensm -F $IBEMU_RUN_DIR" || true
  "$B" down --timeout 60 > /dev/null
  # A fresh fabric, OpenSM started as soon as the fabric answers: start to SUBNET UP.
  rm -f "$IBEMU_RUN_DIR/osm.log"
  t0=$(now)
  "$B" up "$TOPO" --sm external -q -o "$IBEMU_RUN_DIR/res2" > "$IBEMU_RUN_DIR/up2.log" 2>&1 &
  wait_for 120 "the fabric to answer smpquery" "$B" exec --port "$HOST:1" -- smpquery -D nodeinfo 0
  OSM_CACHE_DIR=$IBEMU_RUN_DIR "$B" exec --port "$HOST:1" -- opensm -F "$IBEMU_RUN_DIR/osm.conf" \
    -f "$IBEMU_RUN_DIR/osm.log" > /dev/null 2>&1 &
  wait_up "$IBEMU_RUN_DIR/osm.log"; E_START_SM+=("$(since "$t0")")
  pkill -f "opensm -F $IBEMU_RUN_DIR" || true
  "$B" down --timeout 60 > /dev/null
}

# --- ibsim 0.10 with umad2sim ---
S=$WORK/ibsim
mkdir -p "$S"
mkfifo "$S/ctl"
sleep 100000 > "$S/ctl" 2> /dev/null &  # keeps ibsim's console open
SLEEPER=$!
SO=$(ls /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so)
ibsim_round() {
  local t0 i sim c0 u0
  cd "$S"
  t0=$(now)
  "${S_SIM[@]}" ibsim -s "$TOPO" < ctl > ibsim.log 2>&1 &
  sim=$!  # env becomes ibsim (exec): the same process
  wait_for 120 "ibnetdiscover on ibsim" \
    sh -c 'SIM_HOST=$0 LD_PRELOAD=$1 ibnetdiscover > disc' "$HOST" "$SO"
  S_FIRST+=("$(since "$t0")")
  for ((i = 0; i < DISC; i++)); do
    t0=$(now); SIM_HOST=$HOST LD_PRELOAD=$SO ibnetdiscover > /dev/null 2>&1; S_DISC+=("$(since "$t0")")
  done
  osm_conf "$S"
  rm -f "$S/osm.log"
  c0=$(cpu_of "$sim") u0=$(user_cpu_of "$sim")
  t0=$(now)
  SIM_HOST=$HOST OSM_CACHE_DIR=$S LD_PRELOAD=$SO$S_PRELOAD IBEMU_RTT_OUT=$WORK/rtt.ibsim \
    opensm -F "$S/osm.conf" -f "$S/osm.log" > /dev/null 2>&1 &
  local osm=$!
  wait_up "$S/osm.log"; S_SM+=("$(since "$t0")")
  S_SIM_CPU+=("$(echo "$(cpu_of "$sim") - $c0" | bc)")
  S_SIM_USER+=("$(echo "$(user_cpu_of "$sim") - $u0" | bc)")
  S_OSM_CPU+=("$(cpu_of "$osm")")
  s_ports=$(grep -c '^\[' disc)
  pkill -f "opensm -F $S" || true
  # From its console, so that it exits as a program does and the preloaded timer writes its line.
  # Opening the fifo waits for a reader: bounded, in case ibsim is gone already.
  timeout 5 sh -c 'echo quit > "$0"' ctl || true
  local t_quit=${EPOCHREALTIME//[!0-9]/}
  while pgrep -f "ibsim -s $TOPO" > /dev/null && ((${EPOCHREALTIME//[!0-9]/} - t_quit < 5000000)); do
    nap 0.02
  done
  if pkill -f "ibsim -s $TOPO"; then
    # Still there after 5 s, stopped as before: a quit it never read would stop the next ibsim.
    dd if=ctl of=/dev/null iflag=nonblock status=none 2> /dev/null || true
  fi
  wait_for 30 "the first ibsim to exit" sh -c '! pgrep -f "ibsim -s $0"' "$TOPO"
  rm -f "$S/osm.log"
  t0=$(now)
  ibsim -s "$TOPO" < ctl > ibsim2.log 2>&1 &
  wait_for 120 "ibsim to answer smpquery" env SIM_HOST="$HOST" LD_PRELOAD="$SO" smpquery -D nodeinfo 0
  SIM_HOST=$HOST OSM_CACHE_DIR=$S LD_PRELOAD=$SO opensm -F "$S/osm.conf" -f "$S/osm.log" > /dev/null 2>&1 &
  wait_up "$S/osm.log"; S_START_SM+=("$(since "$t0")")
  pkill -f "opensm -F $S" || true
  pkill -f "ibsim -s $TOPO" || true
  wait_for 30 "ibsim to exit" sh -c '! pgrep -f "ibsim -s $0"' "$TOPO"
  cd - > /dev/null
}

for ((r = 0; r < ROUNDS; r++)); do
  ibemu_round
  ibsim_round
done

row() {  # label, ibemu samples name, ibsim samples name
  local -n a=$2 b=$3
  local x y
  x=$(median "${a[@]}"); y=$(median "${b[@]}")
  # CPU times come in clock ticks: a median of none has no ratio.
  if [ "$(echo "$y == 0" | bc)" -eq 1 ]; then
    printf '%-44s %10.2f %10.2f %8s\n' "$1" "$x" "$y" -
  else
    printf '%-44s %10.2f %10.2f %8.2f\n' "$1" "$x" "$y" "$(echo "$x / $y" | bc -l)"
  fi
}
# The ratio of each pair of runs in the same place of a round on both sides (OpenSM's sweep, or
# the j-th ibnetdiscover), seconds apart: on a shared host whose speed drifts within a minute, a
# pair shares the host's state, where the two medians of a row come from different moments.
paired() {  # label, ibemu samples name, ibsim samples name
  local -n a=$2 b=$3
  local i r=()
  for ((i = 0; i < ${#a[@]} && i < ${#b[@]}; i++)); do r+=("$(echo "${a[i]} / ${b[i]}" | bc -l)"); done
  printf '%-44s %10s %10s %8.2f  (%.2f-%.2f, %d pairs)\n' "$1" "" "" "$(median "${r[@]}")" \
    "$(printf '%s\n' "${r[@]}" | sort -g | head -1)" "$(printf '%s\n' "${r[@]}" | sort -g | tail -1)" \
    "${#r[@]}"
}
printf '%-44s %10s %10s %8s\n' "wall seconds (median)" ibemu ibsim ratio
row "start to a complete ibnetdiscover" E_FIRST S_FIRST
row "ibnetdiscover on a running fabric" E_DISC S_DISC
paired "  ratio of each pair (median)" E_DISC S_DISC
row "  the same through ibemu exec" E_EXEC S_DISC
row "opensm start to SUBNET UP" E_SM S_SM
paired "  ratio of each pair (median)" E_SM S_SM
row "start to SUBNET UP (opensm when it answers)" E_START_SM S_START_SM
printf '%-44s %10s %10s %8s\n' "CPU seconds, opensm on a fabric up (median)" ibemu ibsim ratio
row "  the simulator's, opensm start to SUBNET UP" E_SIM_CPU S_SIM_CPU
row "    of which in user space" E_SIM_USER S_SIM_USER
row "  opensm's own, its start to SUBNET UP" E_OSM_CPU S_OSM_CPU
printf '%-44s %10s %10s\n' "port lines discovered" "$e_ports" "$s_ports"
if [ -n "$S_PRELOAD" ]; then
  echo "OpenSM's MAD round trips on a fabric that is up (bench/umad_rtt.cc), a sweep a line:"
  sed 's/^/  ibemu: /' "$WORK/rtt.ibemu"
  sed 's/^/  ibsim: /' "$WORK/rtt.ibsim"
  echo "Time MADs spent inside the simulator (bench/sim_residence.cc), a socket a line:"
  echo "(ibemu: each ibnetdiscover run, then OpenSM's sweep; ibsim: all of a round's tools)"
  sed 's/^/  ibemu: /' "$WORK/res.ibemu"
  sed 's/^/  ibsim: /' "$WORK/res.ibsim"
fi
if [ -n "${BURN_US:-}" ]; then
  echo "BURN_US=$BURN_US: ibemu's fabric spun $BURN_US us more a MAD taken in (ibsim unaffected)"
fi
