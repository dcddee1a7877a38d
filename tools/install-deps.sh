#!/usr/bin/env bash
# Installs tilesim's build and test dependencies from Debian packages.
# Idempotent: does nothing when everything is already installed. CUDA and NCCL
# are not Debian packages here; the build uses /usr/local/cuda when present.
# --test adds what only the tests need (Chromium for the HTML report test). Python packages
# (nanobind, scikit-build-core, pytest) come from PyPI into build/venv: tools/python-env.sh.
set -euo pipefail

packages=(
  cmake g++ make
  libboost-graph-dev libyaml-cpp-dev catch2 libfmt-dev libcli11-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin libbenchmark-dev
  python3-dev python3-venv
)
if [ "${1:-}" = "--test" ]; then
  packages+=(chromium bsdutils)  # bsdutils: `script`, a pseudo-terminal for the progress test
fi

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
