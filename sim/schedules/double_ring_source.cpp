#include "sim/schedules/double_ring_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/schedules/chunk_layouts.hpp"

namespace tilesim {

DoubleRingSource::DoubleRingSource(const AttentionShape& shape, int ranks, int inner,
                                   Correction correction, int classes, int first_rank)
    : groups_(ranks), classes_(classes > 0 ? classes : ranks), fold_peers_(classes_ < ranks) {
  check_double_ring_inner(ranks, inner);
  if (ranks % classes_ != 0 || classes_ % inner != 0 || first_rank < 0 ||
      first_rank % classes_ != 0) {
    throw std::invalid_argument(fmt::format(
        "a double-ring quotient plan takes classes a multiple of inner = {} dividing {}, and a "
        "first rank a multiple of them",
        inner, ranks));
  }
  // In make_double_ring_classes_plan's order, so that objects get the same ids: the layout, its
  // chunks rotated, the objects, the reach (read from the P-rank plan), then K programs.
  plan_ = double_ring_layout(shape, ranks);
  if (first_rank != 0) rotate_chunk_contents(plan_, first_rank);
  objs_ = add_attention_objects(plan_);
  reach_ = kv_reach(plan_, inner);
  plan_.programs.assign(static_cast<std::size_t>(classes_), RankProgram{});
  plan_.ranks = classes_;
  steps_.emplace(plan_, correction, 2);
  members_.reserve(static_cast<std::size_t>(classes_));
  for (int p = 0; p < classes_; ++p)
    members_.emplace_back(steps_->generated(), groups_, objs_, reach_, p);
}

bool DoubleRingSource::extend(int rank) {
  const auto i = static_cast<std::size_t>(rank);
  DoubleRingMember& member = members_[i];
  if (member.done()) return false;
  const int begin = steps_->step_begin(rank);
  member.emit_step();
  if (fold_peers_) {
    RankProgram& program = steps_->raw_program(rank);
    for (int op_index = begin; op_index < static_cast<int>(program.size()); ++op_index) {
      Op& op = program.mutable_op(op_index);
      if (op.kind == OpKind::send || op.kind == OpKind::recv) op.peer %= classes_;
    }
  }
  // A step's receives wait for the last frees, from the previous step under the full and causal
  // masks, maybe older under a window or documents.
  steps_->step_done(rank, begin, member.oldest_awaited(), member.done());
  return true;
}

void DoubleRingSource::discard_before(int /*rank*/, int /*index*/) {
  // The tracker drops the finished ops from plan().programs itself; the raw programs are
  // trimmed step by step in extend().
}

std::string DoubleRingSource::whole_plan_digest() const {
  for (const DoubleRingMember& member : members_) {
    if (!member.done()) {
      throw std::logic_error("DoubleRingSource::whole_plan_digest: a program is not complete");
    }
  }
  return steps_->digest();
}

}  // namespace tilesim
