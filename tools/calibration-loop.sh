#!/usr/bin/env bash
# Calibrate -> run -> validate on this machine (cpu backend), and fail when the prediction
# error leaves its bounds: median |makespan error| <= --median (default 0.10) and
# max <= --max (default 0.25).
#
#   tools/calibration-loop.sh [--quick] [--quick-calibrate] [--tilesim build/tilesim]
#                             [--mpirun mpirun]
#                             [--work DIR] [--median 0.10] [--max 0.25] [--repeat N]
#                             [--nice N] [--calibrate-ranks 4] [--attempts 1]
#
# --nice N (e.g. -10, needs root) runs calibrate and the runs at that niceness, so that on a
# host shared with other work the measurements see the machine rather than the neighbours.
# Calibrate runs on as many ranks as the largest run (default 4), so that its probe runs
# through the executor (runtime/calibration/calibration_probes.hpp) see the runs' sharing of cores.
# Each run is repeated N times (default 5), the repeats going round all runs in
# turn, and the fastest kept, as calibrate keeps the fastest sample: on a shared host, load
# from other processes only ever adds time.
# Full: ring, zigzag (causal) and mesh at 1K, 2K and 4K tokens on 2 and 4 ranks (mesh 2x1 on
# 2 ranks, 2x2 on 4). --quick (CI, under a minute): 6 runs at 1K-2K after the same full
# calibration, because the quick calibration's few samples are what a noisy host spoils
# first (measured: a quick-calibrated loop out by 26% where full-calibrated ones stayed
# within 12%). --quick-calibrate passes --quick to calibrate as well.
# --attempts N reruns the whole loop (calibration included, in WORK/attemptK) up to N times
# while the error is out of bounds, and passes when one attempt is in bounds: a burst of load
# from elsewhere rarely lasts two loops, while a broken fit or model is out of bounds every
# time. Any other failure (a crash, a missing binary) is not retried.
# Exit status: 0 in bounds, 3 out of bounds, 2 bad arguments, else the failing command's.
# Prints one table row per run: schedule, ranks, size, measured, predicted, error.
set -euo pipefail

quick=0
quick_calibrate=0
tilesim=build/tilesim
mpirun=mpirun
work=$(mktemp -d)
median_bound=0.10
max_bound=0.25
repeat=0
nice_level=""
calibrate_ranks=4
attempts=1
forwarded=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --work | --attempts) ;;
    --quick | --quick-calibrate) forwarded+=("$1") ;;
    *) forwarded+=("$1" "${2:-}") ;;
  esac
  case "$1" in
    --quick) quick=1; shift ;;
    --quick-calibrate) quick_calibrate=1; shift ;;
    --tilesim) tilesim=$2; shift 2 ;;
    --mpirun) mpirun=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --attempts) attempts=$2; shift 2 ;;
    --median) median_bound=$2; shift 2 ;;
    --max) max_bound=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --nice) nice_level=$2; shift 2 ;;
    --calibrate-ranks) calibrate_ranks=$2; shift 2 ;;
    *) echo "calibration-loop.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ ! $attempts =~ ^[1-9][0-9]*$ ]]; then
  echo "calibration-loop.sh: --attempts expects a positive integer, got '$attempts'" >&2
  exit 2
fi
if ((attempts > 1)); then
  for ((attempt = 1; attempt <= attempts; attempt++)); do
    echo "calibration loop: attempt $attempt of $attempts"
    rc=0
    bash "$0" "${forwarded[@]}" --work "$work/attempt$attempt" || rc=$?
    [[ $rc == 3 ]] || exit "$rc"
  done
  exit 3
fi
mkdir -p "$work"
[[ $repeat == 0 ]] && repeat=5
echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg)"
launch() {
  if [[ -n $nice_level ]]; then
    nice -n "$nice_level" "$mpirun" -np "$1" --oversubscribe "${@:2}"
  else
    "$mpirun" -np "$1" --oversubscribe "${@:2}"
  fi
}

profile=$work/cpu.calib.yaml
calibrate_args=(calibrate --backend cpu --out "$profile" --ranks "$calibrate_ranks")
[[ $quick_calibrate == 1 ]] && calibrate_args+=(--quick)
launch "$calibrate_ranks" "$tilesim" "${calibrate_args[@]}" > "$work/calibrate.log"
tail -n 3 "$work/calibrate.log"

if [[ $quick == 1 ]]; then
  runs="ring:2:1K zigzag:2:2K mesh:2:1K ring:4:2K zigzag:4:1K mesh:4:2K"
else
  runs=""
  for kind in ring zigzag mesh; do
    for ranks in 2 4; do
      for size in 1K 2K 4K; do runs+=" $kind:$ranks:$size"; done
    done
  done
fi

# run_args RUN: sets kind, ranks, size, scenario, out and the --set arguments of one run.
run_args() {
  IFS=: read -r kind ranks size <<< "$1"
  local tile
  tile=$([[ $ranks == 2 ]] && echo "[2,1]" || echo "[2,2]")
  sets=(--set "attention.seq_len=$size" --set "schedule.gpus=$ranks")
  [[ $kind == mesh ]] && sets+=(--set "schedule.tile=$tile")
  scenario=scenarios/cpu/$kind-cpu.yaml
  out=$work/$kind-$ranks-$size.json
}

# Repeats go round every run in turn, so that a burst of load from elsewhere spoils one
# sample of several runs rather than every sample of one; each run keeps its fastest.
declare -A best
for ((i = 0; i < repeat; i++)); do
  for run in $runs; do
    run_args "$run"
    launch "$ranks" "$tilesim" run "$scenario" --backend cpu "${sets[@]}" --json > "$out.$i"
    m=$(awk -F'[:,]' '/"makespan_s"/ {print $2; exit}' "$out.$i")
    if [[ -z ${best[$run]:-} ]] || awk -v a="$m" -v b="${best[$run]}" 'BEGIN {exit !(a < b)}'; then
      best[$run]=$m
      cp "$out.$i" "$out"
    fi
  done
done

printf '%-8s %5s %5s %12s %12s %9s\n' schedule ranks size measured_s predicted_s error
errors=()
for run in $runs; do
  run_args "$run"
  "$tilesim" validate "$scenario" "${sets[@]}" --measured "$out" --calibration "$profile" \
    --json > "$out.validate"
  read -r measured predicted error < <(awk -F'[:,]' '
    /"measured_makespan_s"/ {m=$2} /"predicted_makespan_s"/ {p=$2} /"makespan_rel_error"/ {e=$2}
    END {print m, p, e}' "$out.validate")
  printf '%-8s %5s %5s %12.4f %12.4f %+8.1f%%\n' "$kind" "$ranks" "$size" "$measured" \
    "$predicted" "$(awk -v e="$error" 'BEGIN {print 100 * e}')"
  errors+=("$error")
done

echo "host load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for e in "${errors[@]}"; do
  if [[ ! $e =~ ^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$ ]]; then
    echo "calibration loop: validate printed no makespan_rel_error (got '$e')" >&2
    exit 1
  fi
done
printf '%s\n' "${errors[@]}" | awk -v med="$median_bound" -v mx="$max_bound" '
  { a[NR] = ($1 < 0 ? -$1 : $1) }
  END {
    n = NR; for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    median = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    printf "median |error| %.1f%% (bound %.0f%%), max |error| %.1f%% (bound %.0f%%)\n", 100 * median, 100 * med, 100 * a[n], 100 * mx
    if (median > med || a[n] > mx) { print "calibration loop: prediction error out of bounds"; exit 3 }
  }'
