#!/usr/bin/env bash
# Installs the Debian 12 packages the project builds, tests and plots with; installs only what is
# missing, so it is cheap to run every time.
set -euo pipefail
PKGS=(cmake make g++ pkg-config
      libzmq3-dev cppzmq-dev libprotobuf-dev protobuf-compiler libboost-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
      libibverbs-dev libibumad-dev libibmad-dev infiniband-diags opensm ibsim-utils
      ibverbs-utils perftest openmpi-bin libopenmpi-dev hpcc
      gnuplot-nox tshark python3 clang libclang-rt-14-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
# tshark asks whether non-root users may capture; the answer does not matter for reading files.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
