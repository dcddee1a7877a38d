#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU (e.g. a lent H200), run from the repo
# root; budget: under 8 minutes on one GPU. Steps, each with a timeout:
#   configure + build (CUDA and cuDNN ON, Release), the GPU kernel tests (cuDNN and own kernels
#   against the CPU reference, tests/test_kernels_cuda.cpp), the kernel throughput sweep
#   (bench_attention_cuda: 2K/8K/16K blocks, forward and backward, as a share of the GPU's
#   dense bf16 peak), a 1-rank `tilesim run --backend cuda --kernels cudnn --check`, a quick
#   `tilesim calibrate --backend cuda --kernels cudnn` (two ranks with two or more GPUs; on one
#   GPU one rank, links copied from the datasheet profile of that GPU), `tilesim validate`
#   of the run against the datasheet profile and against the calibrated one, and the runtime
#   fault cases on the cuda backend (NCCL abort path; 2 ranks with 2+ GPUs, else one rank).
# Everything lands in $OUT (if set) or ./gpu-check-out; summary.txt is the one-page result:
# pass/fail per step with its figures, and the issue's targets (cuDNN fused forward >= 60%
# and backward >= 40% of dense bf16 peak at 16K tokens, head_dim 128, full mask).
# The cuDNN frontend headers must be in .deps/cudnn-frontend (tools/install-deps.sh; a GPU
# machine without network needs the folder carried along) or TILESIM_CUDNN_FRONTEND_DIR.
# Exit status: the number of failed steps and missed targets (0 = all passed).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-check-out}
build=${BUILD_DIR:-$root/build-gpu}
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=0
started=$SECONDS

note() { echo "$*" | tee -a "$summary"; }
# quote FILE REGEX [MAX]: the lines of FILE that match, indented, into the summary.
quote() { grep -E "$2" "$1" 2>/dev/null | head -n "${3:-3}" | sed 's/^/  /' | tee -a "$summary"; }

step() {  # step NAME TIMEOUT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local verdict=PASS
  [ "$rc" -eq 0 ] || verdict=FAIL
  note "$(printf '%-20s %s (exit %d, %d s)' "$name" "$verdict" "$rc" "$((SECONDS - start))")"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
  return "$rc"
}

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
note "gpu-check $(date -u +%FT%TZ): GPU ${gpu_name:-none} x $gpus, commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"

frontend_args=()
[ -n "${TILESIM_CUDNN_FRONTEND_DIR:-}" ] &&
  frontend_args=("-DTILESIM_CUDNN_FRONTEND_DIR=$TILESIM_CUDNN_FRONTEND_DIR")
step configure 120 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTILESIM_CUDA=ON \
  -DTILESIM_BENCHMARKS=OFF "-DTILESIM_TEST_MODULES=kernels" "${frontend_args[@]}"
quote "$out/configure.log" 'tilesim: cuDNN' 1
step build 300 cmake --build "$build" -j"$(nproc)" \
  --target tilesim test_kernels_cuda bench_attention_cuda
step kernel-tests 90 "$build/tests/test_kernels_cuda" --durations yes
quote "$out/kernel-tests.log" '^(All tests passed|test cases:)' 1
quote "$out/kernel-tests.log" 'no CUDA device|not built' 1

# shellcheck disable=SC2016
step kernel-sweep 150 sh -c '"$0" > "$1"' "$build/kernels/cuda/bench_attention_cuda" \
  "$out/bench_attention_cuda.csv"
quote "$out/kernel-sweep.log" '.' 3
# Shares of peak at head_dim 128, full mask: kernels,chunk,...,tflops,peak_share.
awk -F, 'NR > 1 && $3 == 128 && $4 == 0 {
  printf "  %-11s %5d %s %7.1f TFLOP/s  %5.1f%% of peak\n", $1, $2, $5, $10, 100 * $11 }' \
  "$out/bench_attention_cuda.csv" | tee -a "$summary"
target() {  # target PASS MIN_SHARE
  local share
  share=$(awk -F, -v p="$1" '$1 == "cudnn_fused" && $2 == 16384 && $3 == 128 && $4 == 0 &&
    $5 == p { print $11 }' "$out/bench_attention_cuda.csv")
  if [ -n "$share" ] && awk -v s="$share" -v m="$2" 'BEGIN { exit !(s >= m) }'; then
    note "target cuDNN $1 16K d128 >= $2 of peak: PASS ($share)"
  else
    note "target cuDNN $1 16K d128 >= $2 of peak: FAIL (${share:-not measured})"
    failed=$((failed + 1))
  fi
}
target fwd 0.60
target bwd 0.40

run_sets=(--set schedule.gpus=1 --set attention.seq_len=16K --set attention.heads=16
  --set attention.kv_heads=16 --set attention.head_dim=128 --set attention.causal=true)
# sh -c '"$@" > "$0"' OUT CMD...: CMD's stdout to OUT, every argument passed as it is (the
# single quotes are meant: the inner shell expands them).
# shellcheck disable=SC2016
step cuda-run 90 sh -c '"$@" > "$0"' "$out/cuda-run.json" mpirun -np 1 "$build/tilesim" run \
  "$root/scenarios/ring-256k.yaml" --backend cuda --kernels cudnn --check --json \
  --trace "$out/cuda-run-trace.json" "${run_sets[@]}"
check_json=$(tr -d '\n ' <"$out/cuda-run.json" 2>/dev/null | grep -o '"check":{[^}]*' | head -c 300)
[ -n "$check_json" ] && note "  $check_json"
quote "$out/cuda-run.log" 'ran on the own kernels|no usable GPU|error' 4

# Runtime faults on the cuda backend: the NCCL communicator is non-blocking and the watchdog
# aborts it (ncclCommAbort), so a dead, missing or early-exiting peer must end the job within
# the timeout, rank and op named, no rank left (tests/reliability/fault_run.sh, the cases of
# tests/reliability.cmake on 2 ranks). NCCL refuses two ranks on one device, so the peer
# faults need two GPUs; on one GPU only the one-rank NaN case runs.
fault_small=(--set attention.seq_len=96 --set attention.heads=4 --set attention.kv_heads=2
  --set attention.head_dim=16 --set attention.dtype=fp32 --timeout 1.5s)
export FAULT_BACKEND=cuda
fault() {  # fault NAME RANKS MODE RANK OP REGEX
  step "fault-$1" 60 bash "$root/tests/reliability/fault_run.sh" mpirun \
    "$build/tilesim" "$root/scenarios/ring-256k.yaml" "$2" "$3" "$4" "$5" 30 "$6" \
    --set schedule.gpus="$2" "${fault_small[@]}"
  quote "$out/fault-$1.log" 'time to a clean exit|^FAIL' 2
}
if [ "$gpus" -ge 2 ]; then
  fault kill 2 kill 1 3 \
    'rank 1 kills itself \(SIGKILL\) at rank 1 op 3.*process rank 1 .*exited on signal 9'
  fault no-recv 2 no_recv 1 1 \
    'rank 1 never posts the receive rank 1 op 1: recv KV\[0\] from rank 0.*failed at rank [0-9] op [0-9]+: .*no progress for 1500 ms'
  fault exit 2 exit 1 3 'rank 1 exits early at rank 1 op 3: compute'
  fault nan 2 nan 1 0 'rank 1 failed at rank 1 op [0-9]+: compute.*: input [A-Z]+\[1\] holds a non-finite value \(nan\)'
else
  note "fault peer cases   NOT RUN (one GPU: NCCL needs a GPU per rank, the peer faults need 2)"
  fault nan 1 nan 0 0 'rank 0 failed at rank 0 op [0-9]+: compute.*: input [A-Z]+\[0\] holds a non-finite value \(nan\)'
fi

case "$gpu_name" in
  *H200*) datasheet=$root/topologies/h200.calib.yaml ;;
  *H800*) datasheet=$root/topologies/h800.calib.yaml ;;
  *A100*) datasheet=$root/topologies/a100.calib.yaml ;;
  *) datasheet=$root/topologies/h100.calib.yaml ;;
esac
note "datasheet profile $(basename "$datasheet")"
calibrate=(calibrate --backend cuda --kernels cudnn --quick --head-dims 128 --heads 16
  --out "$out/cuda.calib.yaml")
if [ "$gpus" -ge 2 ]; then
  step cuda-calibrate 150 mpirun -np 2 "$build/tilesim" "${calibrate[@]}"
else
  step cuda-calibrate 150 mpirun -np 1 "$build/tilesim" "${calibrate[@]}" \
    --links-from "$datasheet"
fi
quote "$out/cuda-calibrate.log" '^(compute:|runs through)|no usable GPU|error' 3

# The same run predicted from the datasheet and from the calibration: the calibrated error
# is the figure that matters; the datasheet one shows what calibrating bought.
for profile in datasheet:"$datasheet" calibrated:"$out/cuda.calib.yaml"; do
  check=validate-${profile%%:*}
  # shellcheck disable=SC2016
  step "$check" 30 sh -c '"$@" > "$0"' "$out/$check.json" "$build/tilesim" validate \
    "$root/scenarios/ring-256k.yaml" "${run_sets[@]}" --measured "$out/cuda-run.json" \
    --calibration "${profile#*:}" --json &&
    note "  makespan error $(grep -o '"makespan_rel_error": *[-0-9.e+]*' "$out/$check.json" |
      sed 's/.*: *//')"
done
note "failed steps and targets: $failed; total $((SECONDS - started)) s"
exit "$failed"
