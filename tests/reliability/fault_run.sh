#!/usr/bin/env bash
# One injected runtime fault under mpirun: the job must end non-zero within LIMIT_S seconds,
# its output must match REGEX (rank and op named), and no rank of it may be left running.
#   fault_run.sh MPIEXEC TILESIM SCENARIO RANKS MODE FAIL_RANK FAIL_OP LIMIT_S REGEX [ARGS...]
# Prints "time to a clean exit: X s" (the figure the issue asks for). The backend is cpu unless
# FAULT_BACKEND says otherwise (tools/gpu-check.sh runs the same faults with FAULT_BACKEND=cuda).
set -uo pipefail
mpiexec=$1 tilesim=$2 scenario=$3 ranks=$4 mode=$5 fail_rank=$6 fail_op=$7 limit_s=$8 regex=$9
shift 9
# A seed no other test uses marks this job's processes for the orphan check.
marker="--seed $((40000 + RANDOM))"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start_ns=$(date +%s%N)
TILESIM_FAIL_RANK=$fail_rank TILESIM_FAIL_OP=$fail_op TILESIM_FAIL_MODE=$mode \
  timeout -k 5 90 "$mpiexec" -np "$ranks" --oversubscribe "$tilesim" run "$scenario" \
  --backend "${FAULT_BACKEND:-cpu}" $marker "$@" > "$log" 2>&1
rc=$?
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
elapsed=$(printf '%d.%03d' $((elapsed_ms / 1000)) $((elapsed_ms % 1000)))
cat "$log"
echo "exit $rc; time to a clean exit: $elapsed s (limit $limit_s s)"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "FAIL: expected the job to fail by itself within 90 s (exit $rc)"; exit 1
fi
# -z: the whole log is one record, so a pattern may span lines.
if ! grep -Ezq "$regex" "$log"; then echo "FAIL: output does not match '$regex'"; exit 1; fi
if [ "$elapsed_ms" -gt $((limit_s * 1000)) ]; then echo "FAIL: slower than $limit_s s"; exit 1; fi
sleep 1
if pgrep -f -- "$marker" > /dev/null; then
  echo "FAIL: orphaned ranks:"; pgrep -af -- "$marker"; exit 1
fi
echo "ok: no rank left running"
