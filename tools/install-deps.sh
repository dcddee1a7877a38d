#!/usr/bin/env bash
# Installs tilesim's build and test dependencies from Debian packages.
# Idempotent: does nothing when everything is already installed. CUDA and NCCL
# are not Debian packages here; the build uses /usr/local/cuda when present.
set -euo pipefail

packages=(
  cmake g++ make
  libboost-graph-dev libyaml-cpp-dev catch2 libfmt-dev libcli11-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin libbenchmark-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
