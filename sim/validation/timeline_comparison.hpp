// Compares a measured timeline with the simulator's prediction of the same plan.
//
// Makespan error = (predicted - measured) / measured. Per rank: the error of the rank's end
// time (its last op). Per op, matched by id (rank, index), over ops that ran in both: compute
// and merge ops by their duration (end - start); send and recv ops by their completion time
// (end, from the run's start), because a comm op's measured duration starts at its own post
// while the simulator's starts when both sides are posted, so durations are not comparable.
// Distributions are summarised by median, p90 and max of the absolute relative error
// (error_stats.hpp); the worst ops are those with the largest absolute duration difference in
// seconds (a 1 us op off by 100% matters less than a 1 s op off by 10%).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/validation/error_stats.hpp"

namespace tilesim::validation {

struct OpError {
  OpId id;
  OpKind kind = OpKind::compute;
  double measured_s = 0.0;  // compute/merge: duration; send/recv: completion time
  double predicted_s = 0.0;
  double rel_error = 0.0;
};

struct TimelineComparison {
  double measured_makespan_s = 0.0;
  double predicted_makespan_s = 0.0;
  double makespan_rel_error = 0.0;
  std::vector<double> rank_rel_errors;  // end time per rank
  ErrorSummary ranks;
  ErrorSummary compute_ops;  // compute and merge
  ErrorSummary comm_ops;     // send and recv
  ErrorSummary all_ops;
  std::vector<OpError> worst;  // largest |predicted - measured| first
};

TimelineComparison compare_timelines(const Plan& plan,
                                     const std::vector<std::vector<OpTiming>>& measured,
                                     double measured_makespan_s, const SimulationResult& predicted,
                                     int worst_count = 10);

void print_report(std::ostream& out, const Plan& plan, const TimelineComparison& report);
nlohmann::ordered_json report_to_json(const Plan& plan, const TimelineComparison& report);

}  // namespace tilesim::validation
