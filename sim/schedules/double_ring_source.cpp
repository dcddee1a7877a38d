#include "sim/schedules/double_ring_source.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim {

DoubleRingSource::DoubleRingSource(const AttentionShape& shape, int ranks, int inner,
                                   Correction correction)
    : groups_(ranks) {
  check_double_ring_inner(ranks, inner);
  plan_ = double_ring_layout(shape, ranks);
  objs_ = add_attention_objects(plan_);
  reach_ = kv_reach(plan_, inner);
  if (correction == Correction::eager) plan_.merge_form = MergeForm::eager;
  if (correction != Correction::fused) {
    raw_ = plan_;  // the objects without block partials; the rewriter adds those to plan_
    rewriter_.emplace(plan_);
  }
  Plan& generated = raw_ ? *raw_ : plan_;
  members_.reserve(static_cast<std::size_t>(ranks));
  for (int p = 0; p < ranks; ++p) members_.emplace_back(generated, groups_, objs_, reach_, p);
  raw_step_begin_.assign(static_cast<std::size_t>(ranks), {0, 0});
  digests_.assign(static_cast<std::size_t>(ranks), ProgramDigest{});
}

bool DoubleRingSource::extend(int rank) {
  const auto i = static_cast<std::size_t>(rank);
  DoubleRingMember& member = members_[i];
  if (member.done()) return false;
  if (!raw_) {
    member.emit_step();
    digests_[static_cast<std::size_t>(rank)].add_new_ops(
        plan_.programs[static_cast<std::size_t>(rank)]);
    return true;
  }
  RankProgram& raw = raw_->programs[i];
  const int begin = static_cast<int>(raw.size());
  member.emit_step();
  rewriter_->rewrite(rank, raw, begin, plan_.programs[i]);
  // A step's receives wait for the last frees, from the previous step under the full and causal
  // masks, maybe older under a window or documents: no raw op older than both is read again.
  auto& [older, previous] = raw_step_begin_[i];
  const int keep = std::min(older, member.oldest_awaited());
  raw.discard_before(keep);
  rewriter_->discard_before(rank, keep);
  older = previous;
  previous = begin;
  if (member.done()) rewriter_->forget(rank);
  digests_[static_cast<std::size_t>(rank)].add_new_ops(
      plan_.programs[static_cast<std::size_t>(rank)]);
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
  PlanDigestBuilder digest(plan_);
  for (const ProgramDigest& program : digests_) digest.add_program(program);
  return digest.value();
}

}  // namespace tilesim
