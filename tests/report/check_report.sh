#!/usr/bin/env bash
# ctest report_chromium: writes `tilesim report` for a shipped scenario, renders it in headless
# Chromium (Debian package `chromium`; tools/test.sh installs it), takes a screenshot and checks
# the DOM Chromium built (check_dom.py). Exit 77 (skipped) when there is no Chromium.
# Usage: check_report.sh TILESIM WORKDIR
set -euo pipefail
tilesim=$1
work=$(realpath -m "$2")
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "report_chromium skipped: no chromium on PATH (apt-get install chromium)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
html=$work/report.html
"$tilesim" report scenarios/mesh-1m-256.yaml -o "$html" --gpus 64,128,256 \
  --schedules ring,usp,zigzag --quiet
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
       --user-data-dir="$work/profile" --enable-logging=stderr --v=0)
"$browser" "${flags[@]}" --dump-dom "file://$html" > "$work/dom.html" 2> "$work/dom.log"
"$browser" "${flags[@]}" --hide-scrollbars --window-size=1500,2200 \
  --screenshot="$work/report.png" "file://$html" > /dev/null 2> "$work/shot.log"
# The page has no script, so any console message is a defect (a parse or resource error).
if grep -E "CONSOLE|Uncaught|Failed to load resource" "$work/dom.log" "$work/shot.log"; then
  echo "FAIL: console messages"
  exit 1
fi
python3 "$(dirname "$0")/check_dom.py" "$work/dom.html" "$work/report.png" ring usp zigzag
