#!/usr/bin/env bash
# The README's second command, and what CI runs (.ci/run): installs what is missing (with the
# test extras: Chromium for the report test), builds, and runs every test but the host-timing
# ones (label timing: they need a quiet machine; `ctest --test-dir build -L timing` runs them).
# The one place that builds and tests: add a test step here, not in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh --test
ctest --test-dir build --output-on-failure -LE timing -j"${TILESIM_JOBS:-2}"
