#include "sim/model/exposed_comm.hpp"

#include <algorithm>

namespace tilesim {

Picoseconds exposed_comm_ps(const Plan& plan, const std::vector<OpTiming>& timings, int rank) {
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
  Picoseconds exposed = 0;
  Picoseconds stream_free = 0;
  Picoseconds output_arrived = 0;
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    const Op& op = program.op(i);
    const OpTiming& t = timings[static_cast<std::size_t>(i)];
    if (t.start_ps < 0) continue;
    if (op.kind == OpKind::compute || op.kind == OpKind::merge) {
      exposed += std::max<Picoseconds>(0, t.start_ps - stream_free);
      stream_free = std::max(stream_free, t.end_ps);
    } else if (op.kind == OpKind::recv) {
      const DataObject& obj = plan.object(program.writes(i)[0]);
      if (obj.output && obj.home_rank == rank) output_arrived = std::max(output_arrived, t.end_ps);
    }
  }
  return exposed + std::max<Picoseconds>(0, output_arrived - stream_free);
}

void fill_exposed_comm(const Plan& plan, SimulationResult& result) {
  for (int r = 0; r < plan.ranks; ++r) {
    result.ranks[static_cast<std::size_t>(r)].exposed_comm_ps =
        exposed_comm_ps(plan, result.ops[static_cast<std::size_t>(r)], r);
  }
}

}  // namespace tilesim
