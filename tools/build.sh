#!/usr/bin/env bash
# Installs what is missing, configures and builds tilesim into build/ (idempotent: a second
# run rebuilds only what changed). TILESIM_WERROR=ON makes warnings errors (CI).
# Extra CMake arguments can be passed in TILESIM_CMAKE_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh "$@"
python_args=()
if python=$(bash tools/python-env.sh); then
  python_args=(-DPython_EXECUTABLE="$python")
fi
# ccache (installed by install-deps) makes a rebuild, and the tsan tree's uninstrumented sim/
# libraries (tools/sanitize.sh), cost almost nothing.
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# shellcheck disable=SC2086
cmake -S . -B build "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DTILESIM_WERROR="${TILESIM_WERROR:-OFF}" \
  "${python_args[@]}" ${TILESIM_CMAKE_ARGS:-}
cmake --build build -j"${TILESIM_JOBS:-2}"
