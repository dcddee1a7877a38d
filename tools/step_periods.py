#!/usr/bin/env python3
"""Per-rank step periods of a simulated run, read from `simulate --per-op` result JSON.

For each rank, the interval between the starts of consecutive compute ops (in integer
picoseconds, rounded from op_times' seconds, which carry picosecond resolution), the first
step from which that interval stays constant to the end, and the distinct periods over all
ranks. A run whose whole state repeats shifted by one period T from some step on has one
period for every rank; ranks with different periods drift apart in phase, so the state does
not repeat as a whole (docs/design-notes.md, "Scale", steady state in time).

usage: tools/step_periods.py RESULT.json
"""
import collections
import json
import sys


def main(path):
    doc = json.load(open(path))
    if "op_times" not in doc:
        sys.exit(f"{path}: no op_times (run `tilesim simulate --per-op`)")
    starts = collections.defaultdict(list)
    for op in doc["op_times"]:
        if op["kind"] == "compute":
            starts[op["rank"]].append(round(op["start_s"] * 1e12))
    periods = collections.Counter()
    ranks_of_period = collections.defaultdict(list)
    latest_steady_step = 0
    for rank in sorted(starts):
        s = starts[rank]
        gaps = [b - a for a, b in zip(s, s[1:])]
        if not gaps:
            continue
        first = len(gaps) - 1
        while first > 0 and gaps[first - 1] == gaps[-1]:
            first -= 1
        latest_steady_step = max(latest_steady_step, first)
        periods[gaps[-1]] += 1
        ranks_of_period[gaps[-1]].append(rank)
    print(f"{path}: {len(starts)} ranks, makespan {doc['makespan_s']} s")
    print(f"  every rank's period is constant from step {latest_steady_step} on")
    for period, count in periods.most_common():
        ranks = ranks_of_period[period]
        shown = ", ".join(map(str, ranks[:24])) + (" ..." if len(ranks) > 24 else "")
        print(f"  period {period} ps: {count} ranks ({shown})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
