#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the default scenario
# (ring attention, 256K tokens, 8 H100 GPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
build/tilesim simulate scenarios/ring-256k.yaml
