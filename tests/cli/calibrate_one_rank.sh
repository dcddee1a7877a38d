#!/usr/bin/env bash
# One-rank calibration (a machine with one GPU, here the cpu backend): calibrate copies the
# links of --links-from verbatim, measures compute, and its profile predicts a one-rank run.
#   calibrate_one_rank.sh TILESIM WORK_DIR
set -euo pipefail
tilesim=$1
work=$2
mkdir -p "$work"
source_profile=topologies/cpu.calib.yaml
profile=$work/one-rank.calib.yaml

"$tilesim" calibrate --backend cpu --quick --links-from "$source_profile" --out "$profile"
grep -q '^# copied from topologies/cpu.calib.yaml' "$profile"
# The links section and comm_slowdown are the source's, line for line (less the source's
# comments, which describe how the source was measured).
links() { sed -n '/^links:/,$p' "$1" | sed 's/ *#.*//'; }
diff <(links "$source_profile") <(links "$profile")
diff <(grep '^  comm_slowdown:' "$source_profile") <(grep '^  comm_slowdown:' "$profile")

sets=(--set schedule.gpus=1 --set attention.seq_len=1K)
"$tilesim" run scenarios/cpu/ring-cpu.yaml --backend cpu "${sets[@]}" --json > "$work/run.json"
"$tilesim" validate scenarios/cpu/ring-cpu.yaml "${sets[@]}" --measured "$work/run.json" \
  --calibration "$profile" --json > "$work/validate.json"
# One rank computes alone: the calibrated compute alone predicts it (CI's bound, as the loop).
awk -F'[:,]' '/"makespan_rel_error"/ {
  e = $2 < 0 ? -$2 : $2
  printf "one-rank makespan error %.1f%% (bound 35%%)\n", 100 * e
  exit !(e <= 0.35)
}' "$work/validate.json"
