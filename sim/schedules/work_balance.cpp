#include "sim/schedules/work_balance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "sim/schedules/schedule.hpp"

namespace tilesim {

WorkAssignment assign_blocks_by_work(const AttentionShape& shape, int ranks, int blocks_per_rank) {
  TokenLayout layout;
  layout.seq_len = shape.seq_len;
  layout.blocks = ranks * blocks_per_rank;
  const PositionRun all{0, 1, shape.seq_len};
  std::vector<double> work(static_cast<std::size_t>(layout.blocks));
  for (int b = 0; b < layout.blocks; ++b) {
    work[static_cast<std::size_t>(b)] = shape.mask.pairs(layout.run(b), all);
  }
  std::vector<int> order(work.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return work[static_cast<std::size_t>(a)] > work[static_cast<std::size_t>(b)];
  });
  WorkAssignment out;
  out.blocks_per_rank = blocks_per_rank;
  out.rank_blocks.resize(static_cast<std::size_t>(ranks));
  std::vector<double> load(static_cast<std::size_t>(ranks), 0.0);
  for (int b : order) {
    int best = -1;
    for (int r = 0; r < ranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (static_cast<int>(out.rank_blocks[i].size()) >= blocks_per_rank) continue;
      if (best < 0 || load[i] < load[static_cast<std::size_t>(best)]) best = r;
    }
    out.rank_blocks[static_cast<std::size_t>(best)].push_back(b);
    load[static_cast<std::size_t>(best)] += work[static_cast<std::size_t>(b)];
  }
  for (auto& blocks : out.rank_blocks) std::sort(blocks.begin(), blocks.end());
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  const double max_load = *std::max_element(load.begin(), load.end());
  out.max_over_mean = total > 0 ? max_load / (total / ranks) : 1.0;
  return out;
}

WorkAssignment balanced_assignment(const AttentionShape& shape, int ranks) {
  WorkAssignment best;
  bool found = false;
  for (int k : {2, 4, 8, 16, 32}) {
    if (shape.seq_len % (static_cast<std::int64_t>(k) * ranks) != 0) continue;
    WorkAssignment a = assign_blocks_by_work(shape, ranks, k);
    if (!found || a.max_over_mean < best.max_over_mean) {
      best = std::move(a);
      found = true;
    }
    if (best.max_over_mean <= 1.01) break;
  }
  if (!found) {
    throw ScheduleError("attention.seq_len",
                        fmt::format("balance: work cuts seq_len {} into k * {} blocks (k = 2, 4, "
                                    "8, 16 or 32); none divides it",
                                    shape.seq_len, ranks));
  }
  return best;
}

}  // namespace tilesim
