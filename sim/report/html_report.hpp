// `tilesim report`: one self-contained HTML page (inline SVG and CSS; no script, no network)
// for a scenario:
//   - speedup over one GPU and parallel efficiency (speedup / GPUs) against GPU count, one
//     curve per schedule (each point is the compare verb's row at that GPU count);
//   - the timeline of one step (the plan's pass) per GPU of the scenario's own run: a compute
//     lane (compute and merge ops) and a comm lane (transfers, posted to arrived);
//   - link utilisation over time per link class (link_utilisation.hpp);
//   - peak memory per rank, stacked by tensor kind (the breakdown at the rank's peak);
//   - the compare table at the scenario's GPU count.
// The page is a function of the inputs: the same scenario gives the same bytes (no wall-clock
// figure is printed).
#pragma once

#include <string>
#include <vector>

#include "sim/verbs/item_map.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

struct ReportOptions {
  std::vector<int> gpus;    // empty: P/4, P/2 and P of the scenario (those >= 1)
  std::string schedules;    // compare's --schedules; empty: ring and the scenario's schedule
  int timeline_ranks = 16;  // GPUs drawn in the timeline (the first ones)
  int memory_ranks = 64;    // ranks drawn in the memory chart
};

std::string report_html(const ScenarioSource& source, const ReportOptions& options,
                        const ProgressFn& progress = {});

}  // namespace tilesim
