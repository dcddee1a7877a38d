#include "sim/schedules/pass_q_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tilesim {

PassQSource::PassQSource(const AttentionShape& shape, int ranks, int classes, Correction correction)
    : groups_(ranks) {
  if (classes < 1 || classes > ranks || ranks % classes != 0) {
    throw std::invalid_argument(
        fmt::format("PassQSource: classes {} must divide the {} ranks", classes, ranks));
  }
  plan_ = pass_q_layout(shape, ranks);
  objs_ = add_attention_objects(plan_);
  partials_ = add_pass_q_partials(plan_);
  route_ = route_q(plan_);
  // As keep_class_programs: the programs of ranks 0..K-1 with their full peers.
  plan_.programs.assign(static_cast<std::size_t>(classes), RankProgram{});
  plan_.ranks = classes;
  steps_.emplace(plan_, correction, 2);
  members_.reserve(static_cast<std::size_t>(classes));
  for (int r = 0; r < classes; ++r) {
    members_.emplace_back(steps_->generated(), groups_, objs_, partials_, route_, r);
  }
}

bool PassQSource::extend(int rank) {
  const auto i = static_cast<std::size_t>(rank);
  PassQMember& member = members_[i];
  if (member.done()) return false;
  const int begin = steps_->step_begin(rank);
  member.emit_step();
  // A step's Q receive waits for the last Q free: the previous step's under the full and causal
  // masks, maybe older under a window or documents.
  steps_->step_done(rank, begin, member.oldest_awaited(), member.done());
  return true;
}

void PassQSource::discard_before(int /*rank*/, int /*index*/) {
  // The tracker drops the finished ops from plan().programs itself; the raw programs are
  // trimmed step by step in extend().
}

std::string PassQSource::whole_plan_digest() const {
  for (const PassQMember& member : members_) {
    if (!member.done()) {
      throw std::logic_error("PassQSource::whole_plan_digest: a program is not complete");
    }
  }
  return steps_->digest();
}

}  // namespace tilesim
