#include "runtime/executor/measured_result.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/model/exposed_comm.hpp"
#include "sim/plan/send_recv_pairs.hpp"

namespace tilesim::runtime {
namespace {

Picoseconds union_length(std::vector<std::pair<Picoseconds, Picoseconds>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  Picoseconds total = 0;
  Picoseconds cur_start = -1;
  Picoseconds cur_end = -1;
  for (const auto& [s, e] : intervals) {
    if (s > cur_end) {
      if (cur_end > cur_start) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end > cur_start) total += cur_end - cur_start;
  return total;
}

}  // namespace

SimulationResult measured_result(const Plan& plan, const std::vector<RankRun>& ranks,
                                 double wall_s) {
  if (ranks.size() != static_cast<std::size_t>(plan.ranks)) {
    throw std::invalid_argument("measured_result: one RankRun per plan rank expected");
  }
  SimulationResult result;
  result.sim_wall_s = wall_s;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    const RankRun& run = ranks[static_cast<std::size_t>(r)];
    if (run.timings.size() != program.size()) {
      throw std::invalid_argument("measured_result: timings do not match the program");
    }
    result.ops.push_back(run.timings);
    RankTotals totals;
    std::vector<std::pair<Picoseconds, Picoseconds>> comm;
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      const OpTiming& t = run.timings[static_cast<std::size_t>(i)];
      if (t.start_ps < 0) continue;
      totals.end_ps = std::max(totals.end_ps, t.end_ps);
      if (op.kind == OpKind::compute || op.kind == OpKind::merge) {
        totals.compute_busy_ps += t.end_ps - t.start_ps;
      } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
        comm.emplace_back(t.start_ps, t.end_ps);
      }
    }
    totals.comm_active_ps = union_length(std::move(comm));
    totals.compute_flops = run.compute_flops;
    totals.bytes_sent = run.bytes_sent;
    totals.bytes_received = run.bytes_received;
    totals.peak_bytes = run.peak_bytes;
    result.makespan_ps = std::max(result.makespan_ps, totals.end_ps);
    result.single_gpu_s += ps_to_s(totals.compute_busy_ps);
    result.events += program.size();
    result.ranks.push_back(totals);
  }
  for (const auto& [send, recv] : send_recv_pairs(plan)) {
    const OpTiming& ts =
        result.ops[static_cast<std::size_t>(send.rank)][static_cast<std::size_t>(send.index)];
    const OpTiming& tr =
        result.ops[static_cast<std::size_t>(recv.rank)][static_cast<std::size_t>(recv.index)];
    const int object = plan.programs[static_cast<std::size_t>(recv.rank)].writes(recv.index)[0];
    result.transfers.push_back(TransferRecord{send, recv, object, plan.object(object).bytes,
                                              std::max(ts.start_ps, tr.start_ps),
                                              std::max(ts.end_ps, tr.end_ps)});
  }
  fill_exposed_comm(plan, result);
  return result;
}

}  // namespace tilesim::runtime
