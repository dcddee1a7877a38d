#!/usr/bin/env bash
# Installs tilesim's build and test dependencies from Debian packages, and the cuDNN frontend
# headers (header-only C++ graph API) from the PyPI wheel nvidia-cudnn-frontend into the
# git-ignored .deps/cudnn-frontend/include (only the wheel's include/ is kept).
# Idempotent: does nothing when everything is already installed. CUDA, NCCL and the cuDNN
# library are not Debian packages here; the build uses /usr/local/cuda when present.
# --test adds what only the tests need (Chromium for the HTML report test). Python packages
# (nanobind, scikit-build-core, pytest) come from PyPI into build/venv: tools/python-env.sh.
set -euo pipefail

packages=(
  cmake g++ make ccache  # ccache: the sanitizer trees reuse the Release build's sim/ objects
  libboost-graph-dev libyaml-cpp-dev catch2 libfmt-dev libcli11-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin libbenchmark-dev
  clang libclang-rt-14-dev procps  # tools/sanitize.sh fuzz (libFuzzer); pgrep in fault tests
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

# pip fetches the frontend wheel; Debian's pip is enough (it only downloads).
if ! python3 -m pip --version >/dev/null 2>&1; then missing+=(python3-pip); fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The frontend version is pinned so that every build compiles the same headers.
frontend_version=${TILESIM_CUDNN_FRONTEND_VERSION:-1.32.0}
frontend_dir=$(cd "$(dirname "$0")/.." && pwd)/.deps/cudnn-frontend
stamp=$frontend_dir/version
if [ -f "$frontend_dir/include/cudnn_frontend.h" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$frontend_version" ]; then
  echo "install-deps: cuDNN frontend $frontend_version headers present"
else
  echo "install-deps: fetching cuDNN frontend $frontend_version headers"
  wheel_dir=$(mktemp -d)
  trap 'rm -rf "$wheel_dir"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$wheel_dir" \
    "nvidia-cudnn-frontend==$frontend_version"
  rm -rf "$frontend_dir"
  mkdir -p "$frontend_dir"
  # Only the headers: the wheel's Python module and kernels are not needed by the C++ build.
  python3 - "$wheel_dir" "$frontend_dir" <<'PY'
import pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("include/")])
PY
  echo "$frontend_version" >"$stamp"
fi
echo "install-deps: done"
