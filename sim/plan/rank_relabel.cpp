#include "sim/plan/rank_relabel.hpp"

#include <stdexcept>
#include <vector>

namespace tilesim {

void relabel_ranks(Plan& plan, std::span<const int> new_rank) {
  const auto at = [](int i) { return static_cast<std::size_t>(i); };
  const int ranks = plan.ranks;
  std::vector<char> taken(at(ranks), 0);
  bool permutation =
      static_cast<int>(new_rank.size()) == ranks && static_cast<int>(plan.programs.size()) == ranks;
  for (std::size_t r = 0; permutation && r < new_rank.size(); ++r) {
    const int to = new_rank[r];
    permutation = to >= 0 && to < ranks && !taken[at(to)];
    if (permutation) taken[at(to)] = 1;
  }
  if (!permutation) {
    throw std::invalid_argument("relabel_ranks: new ranks must permute the plan's ranks");
  }
  std::vector<RankProgram> programs(at(ranks));
  for (int r = 0; r < ranks; ++r) {
    RankProgram& program = programs[at(new_rank[at(r)])];
    program = std::move(plan.programs[at(r)]);
    for (int i = program.first_index(); i < static_cast<int>(program.size()); ++i) {
      Op& op = program.mutable_op(i);
      if (op.kind == OpKind::send || op.kind == OpKind::recv) op.peer = new_rank[at(op.peer)];
    }
  }
  plan.programs = std::move(programs);
  for (Chunk& chunk : plan.chunks) chunk.owner = new_rank[at(chunk.owner)];
  for (DataObject& object : plan.objects) object.home_rank = new_rank[at(object.home_rank)];
  if (!plan.placement.empty()) {
    std::vector<int> placement(at(ranks));
    for (int r = 0; r < ranks; ++r) placement[at(new_rank[at(r)])] = plan.placement[at(r)];
    plan.placement = std::move(placement);
  }
}

}  // namespace tilesim
