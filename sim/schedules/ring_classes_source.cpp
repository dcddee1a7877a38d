#include "sim/schedules/ring_classes_source.hpp"

#include <limits>
#include <stdexcept>
#include <utility>

#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/ring_schedule.hpp"

namespace tilesim {

RingClassesSource::RingClassesSource(RingClassesSpec spec)
    : spec_(std::move(spec)), groups_(spec_.ranks) {
  // As make_pass_kv_ring_classes_plan: the chunks and objects of all P ranks, K programs.
  plan_ = make_chunked_plan(spec_.schedule, spec_.shape, spec_.ranks, spec_.ownership);
  plan_.tile_a = 1;
  plan_.tile_b = spec_.ranks;
  const bool bwd = spec_.shape.has_backward();
  if (bwd && spec_.classes != spec_.ranks) {
    throw std::invalid_argument("RingClassesSource: a backward only with one class per rank");
  }
  const AttentionObjects objs = add_attention_objects(plan_);
  relabel_ranks_from(plan_, spec_.first_rank);
  ring_ = ring_members(plan_, objs, bwd);
  const int n_f = ring_steps(plan_, ring_), n_b = ring_back_steps(plan_, ring_);
  plan_.programs.assign(static_cast<std::size_t>(spec_.classes), RankProgram{});
  plan_.ranks = spec_.classes;
  steps_.emplace(plan_, spec_.correction, 2);
  Plan& generated = steps_->generated();
  const int k_count = spec_.classes;
  for (int k = 0; k < k_count; ++k) {
    if (spec_.shape.has_forward()) {
      members_.push_back(
          std::make_unique<RingMemberForward>(generated, scratch_, ring_, k, (k + 1) % k_count,
                                              (k - 1 + k_count) % k_count, n_f, n_b, groups_));
    }
    if (bwd) {
      backward_members_.push_back(std::make_unique<RingMemberBackward>(
          generated, scratch_, ring_, k, n_f, n_b, groups_, spec_.shape.has_forward()));
    }
  }
}

void RingClassesSource::emit_step(int rank) {
  const auto i = static_cast<std::size_t>(rank);
  if (!members_.empty() && !members_[i]->done()) {
    members_[i]->emit_step();
  } else {
    backward_members_[i]->emit_step();  // not done(rank): the backward has steps left
  }
}

bool RingClassesSource::done(int rank) const {
  const auto i = static_cast<std::size_t>(rank);
  return (members_.empty() || members_[i]->done()) &&
         (backward_members_.empty() || backward_members_[i]->done());
}

bool RingClassesSource::extend(int rank) {
  if (done(rank)) return false;
  const int begin = steps_->step_begin(rank);
  emit_step(rank);
  // The next step's receives may wait for this step's frees, and the backward's first call
  // for the forward's last exchange (RingMemberBackward), one step before its last: two steps.
  steps_->step_done(rank, begin, std::numeric_limits<int>::max(), done(rank));
  return true;
}

void RingClassesSource::discard_before(int /*rank*/, int /*index*/) {
  // The tracker drops the finished ops from plan().programs itself; the raw programs are
  // trimmed step by step in extend().
}

std::string RingClassesSource::whole_plan_digest() const {
  for (int k = 0; k < spec_.classes; ++k) {
    if (!done(k)) {
      throw std::logic_error("RingClassesSource::whole_plan_digest: a program is not complete");
    }
  }
  return steps_->digest();
}

}  // namespace tilesim
