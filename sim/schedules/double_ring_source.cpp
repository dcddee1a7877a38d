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
  steps_.emplace(plan_, correction, 2);
  members_.reserve(static_cast<std::size_t>(ranks));
  for (int p = 0; p < ranks; ++p)
    members_.emplace_back(steps_->generated(), groups_, objs_, reach_, p);
}

bool DoubleRingSource::extend(int rank) {
  const auto i = static_cast<std::size_t>(rank);
  DoubleRingMember& member = members_[i];
  if (member.done()) return false;
  const int begin = steps_->step_begin(rank);
  member.emit_step();
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
