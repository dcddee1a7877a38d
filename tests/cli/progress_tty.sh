#!/usr/bin/env bash
# ctest cli_progress: sweep, tune and compare show progress (done of total, elapsed, estimate)
# on stderr when it is a terminal (a pseudo-terminal from util-linux `script`), and nothing
# when stderr is a file or with --quiet. Usage: progress_tty.sh TILESIM
set -euo pipefail
tilesim=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
progress_re='[0-9]+ of [0-9]+ %s, [0-9.]+ s elapsed, about [0-9.]+ s left'
tty_run() { script -qec "$1" /dev/null > "$work/tty.out" 2>&1 < /dev/null; }
expect_progress() {  # what, command
  tty_run "$2"
  if ! grep -Eq "$(printf "$progress_re" "$1")" "$work/tty.out"; then
    echo "FAIL: no progress of $1 under a terminal for: $2"
    cat -v "$work/tty.out" | head -20
    exit 1
  fi
  echo "ok: progress of $1 on a terminal"
}
expect_progress candidates "$tilesim tune scenarios/ring-256k.yaml"
expect_progress "GPU counts" "$tilesim sweep scenarios/ring-256k.yaml --gpus 2,4,8"
expect_progress schedules "$tilesim compare scenarios/ring-256k.yaml --schedules ring,zigzag,usp"
# --quiet on a terminal: no progress line.
tty_run "$tilesim tune scenarios/ring-256k.yaml --quiet"
if grep -Eq "elapsed, about" "$work/tty.out"; then echo "FAIL: progress despite --quiet"; exit 1; fi
echo "ok: --quiet on a terminal"
# Not a terminal: stderr stays empty.
"$tilesim" tune scenarios/ring-256k.yaml > /dev/null 2> "$work/err"
if [ -s "$work/err" ]; then echo "FAIL: stderr not empty without a terminal"; cat "$work/err"; exit 1; fi
echo "ok: silent when stderr is a file"
