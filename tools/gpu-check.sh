#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU (e.g. a lent H200), run from the repo
# root: configure + build (CUDA ON, Release), the GPU kernel tests, the kernel throughput sweep
# (CSV), a 1-rank `tilesim run --backend cuda --check` of a small scenario, a quick
# `tilesim calibrate --backend cuda` (two ranks with two or more GPUs; on one GPU one rank, the
# links copied from the datasheet profile of that GPU), and `tilesim validate` of the run
# against the datasheet profile and against the calibrated one. Every step has a timeout;
# everything lands in $OUT (if set) or ./gpu-check-out. Exit status: the number of failed
# steps (0 = all passed). Total budget well under 10 minutes.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-check-out}
build=${BUILD_DIR:-$root/build-gpu}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=0

step() {  # step NAME TIMEOUT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s" | tee -a "$out/summary.txt"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
  return "$rc"
}

nvidia-smi >"$out/nvidia-smi.txt" 2>&1
step configure 120 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTILESIM_CUDA=ON \
  -DTILESIM_BENCHMARKS=OFF "-DTILESIM_TEST_MODULES=kernels;runtime" &&
  step build 330 cmake --build "$build" -j"$(nproc)" \
    --target tilesim test_kernels_cuda bench_attention_cuda
step kernel-tests 60 "$build/tests/test_kernels_cuda" --durations yes
step kernel-sweep 90 sh -c "'$build/kernels/cuda/bench_attention_cuda' > '$out/bench_attention_cuda.csv'"
run_sets=(--set schedule.gpus=1 --set attention.seq_len=4K --set attention.heads=8
  --set attention.kv_heads=8 --set attention.head_dim=128 --set attention.causal=true)
# sh -c '"$@" > "$0"' OUT CMD...: CMD's stdout to OUT, every argument passed as it is (the
# single quotes are meant: the inner shell expands them).
# shellcheck disable=SC2016
step cuda-run 60 sh -c '"$@" > "$0"' "$out/cuda-run.json" mpirun -np 1 "$build/tilesim" run \
  "$root/scenarios/ring-256k.yaml" --backend cuda --check --json \
  --trace "$out/cuda-run-trace.json" "${run_sets[@]}"

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
case "$gpu_name" in
  *H200*) datasheet=$root/topologies/h200.calib.yaml ;;
  *H800*) datasheet=$root/topologies/h800.calib.yaml ;;
  *A100*) datasheet=$root/topologies/a100.calib.yaml ;;
  *) datasheet=$root/topologies/h100.calib.yaml ;;
esac
echo "GPU: ${gpu_name:-unknown} x $gpus; datasheet profile $(basename "$datasheet")" | tee -a "$out/summary.txt"
if [ "$gpus" -ge 2 ]; then
  step cuda-calibrate 150 mpirun -np 2 "$build/tilesim" calibrate --backend cuda --quick \
    --out "$out/cuda.calib.yaml"
else
  step cuda-calibrate 150 mpirun -np 1 "$build/tilesim" calibrate --backend cuda --quick \
    --links-from "$datasheet" --out "$out/cuda.calib.yaml"
fi
# The same run predicted from the datasheet and from the calibration: the calibrated error
# is the figure that matters; the datasheet one shows what calibrating bought.
for profile in datasheet:"$datasheet" calibrated:"$out/cuda.calib.yaml"; do
  check=validate-${profile%%:*}
  # shellcheck disable=SC2016
  step "$check" 30 sh -c '"$@" > "$0"' "$out/$check.json" "$build/tilesim" validate \
    "$root/scenarios/ring-256k.yaml" "${run_sets[@]}" --measured "$out/cuda-run.json" \
    --calibration "${profile#*:}" --json &&
    echo "$check: makespan error $(grep -o '"makespan_rel_error": *[-0-9.e+]*' "$out/$check.json" |
      sed 's/.*: *//')" | tee -a "$out/summary.txt"
done
echo "failed steps: $failed" | tee -a "$out/summary.txt"
exit "$failed"
