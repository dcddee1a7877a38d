#!/usr/bin/env bash
# One-rank calibration (a machine with one GPU, here the cpu backend): calibrate copies the
# links, comm_slowdown and cores of --links-from verbatim, measures compute, and its profile
# predicts one-rank runs.
#   calibrate_one_rank.sh TILESIM WORK_DIR
set -euo pipefail
tilesim=$1
work=$2
mkdir -p "$work"
# Every copied value distinct and none a default, so a value not copied is seen.
source_profile=tests/data/calibration/links-source.calib.yaml
profile=$work/one-rank.calib.yaml

"$tilesim" calibrate --backend cpu --quick --links-from "$source_profile" --out "$profile"
grep -q "^# measured: copied from $source_profile" "$profile"
links() { sed -n '/^links:/,$p' "$1" | sed 's/ *#.*//'; }
diff <(links "$source_profile") <(links "$profile")
for key in comm_slowdown cores; do
  diff <(grep "^  $key:" "$source_profile") <(grep "^  $key:" "$profile")
done

# The calibrated compute predicts a one-rank run: the fastest of 3 (as the loop keeps), within
# CI's loop bound. The fixture's cores (3.5) do not matter to one rank.
sets=(--set schedule.gpus=1 --set attention.seq_len=1K)
best=""
for i in 1 2 3; do
  "$tilesim" run scenarios/cpu/ring-cpu.yaml --backend cpu "${sets[@]}" --json > "$work/run.$i.json"
  m=$(awk -F'[:,]' '/"makespan_s"/ {print $2; exit}' "$work/run.$i.json")
  if [[ -z $best ]] || awk -v a="$m" -v b="$best" 'BEGIN {exit !(a < b)}'; then
    best=$m
    cp "$work/run.$i.json" "$work/run.json"
  fi
done
"$tilesim" validate scenarios/cpu/ring-cpu.yaml "${sets[@]}" --measured "$work/run.json" \
  --calibration "$profile" --json > "$work/validate.json"
awk -F'[:,]' '/"makespan_rel_error"/ {
  found = 1
  e = $2 < 0 ? -$2 : $2
  printf "one-rank makespan error %.1f%% (bound 35%%)\n", 100 * e
}
END { if (!found) print "no makespan_rel_error in validate --json"; exit !(found && e <= 0.35) }' \
  "$work/validate.json"
