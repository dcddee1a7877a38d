#include "sim/schedules/usp_classes_source.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <utility>

#include "sim/plan/plan_digest.hpp"

namespace tilesim {

UspClassesSource::UspClassesSource(UspClassesSpec spec)
    : spec_(std::move(spec)), groups_(spec_.ranks) {
  const int u = spec_.ulysses, k_count = spec_.classes;
  const bool fwd = spec_.shape.has_forward(), bwd = spec_.shape.has_backward();
  if (bwd && k_count != spec_.ranks) {
    throw std::invalid_argument("UspClassesSource generates a backward with one class per rank");
  }
  if (u < 1 || k_count < 2 * u || k_count % u != 0 || spec_.ranks % k_count != 0) {
    throw std::invalid_argument(
        fmt::format("a USP quotient plan takes classes a multiple of 2 x u = {} dividing {}", 2 * u,
                    spec_.ranks));
  }
  // As make_usp_classes_plan: the chunks and objects of all P ranks, K programs.
  grid_ = usp_grid(spec_.shape, spec_.ranks, u, "usp");
  if (spec_.first_rank < 0 || spec_.first_rank >= spec_.ranks || spec_.first_rank % u != 0) {
    throw std::invalid_argument("UspClassesSource: a first rank a multiple of u, below P");
  }
  plan_ = make_usp_grid_plan("usp", spec_.shape, spec_.ranks, grid_, objs_, spec_.first_rank);
  for (int h = 0; h < u; ++h) rings_.push_back(usp_head_ring(plan_, grid_, objs_, h));
  plan_.programs.assign(static_cast<std::size_t>(k_count), RankProgram{});
  plan_.ranks = k_count;
  steps_.emplace(plan_, spec_.correction, 1);
  Plan& generated = steps_->generated();
  // Member G of head ring h, its ring closed over the first K / u groups (as
  // add_ring_forward_classes: the last representative group sends to group 0).
  std::vector<UspRingSteps> steps;
  for (const std::vector<RingMember>& ring : rings_)
    steps.push_back(usp_ring_steps(generated, ring));
  for (int x = 0; x < k_count; ++x) {
    const auto h = static_cast<std::size_t>(x % u);
    if (fwd) {
      members_.push_back(usp_ring_member(generated, scratch_, rings_[h], steps[h], grid_, x,
                                         k_count / u, groups_));
    }
    if (bwd) {
      backward_members_.push_back(
          usp_backward_member(generated, scratch_, rings_[h], steps[h], grid_, x, groups_));
    }
  }
  phase_.assign(static_cast<std::size_t>(k_count), fwd ? Phase::prologue : Phase::bwd_prologue);
}

void UspClassesSource::emit_piece(int rank, Phase& phase) {
  Plan& generated = steps_->generated();
  const Phase after_forward = backward_members_.empty() ? Phase::done : Phase::bwd_prologue;
  switch (phase) {
    case Phase::prologue: {
      RingMemberForward& member = *members_[static_cast<std::size_t>(rank)];
      // As usp_forward_rank, with ring step 1 too (see the header).
      usp_forward_prologue(generated, groups_, grid_, objs_, rank);
      member.emit_step();
      usp_free_own_bundle(generated, grid_, objs_, rank);
      if (!member.done()) member.emit_step();
      phase = member.done() ? Phase::epilogue : Phase::ring;
      break;
    }
    case Phase::ring: {
      RingMemberForward& member = *members_[static_cast<std::size_t>(rank)];
      member.emit_step();
      if (member.done()) phase = Phase::epilogue;
      break;
    }
    case Phase::epilogue:
      usp_forward_epilogue(generated, groups_, grid_, objs_, rank);
      phase = after_forward;
      break;
    case Phase::bwd_prologue:
      usp_backward_prologue(generated, groups_, grid_, objs_, rank);
      phase = Phase::bwd_ring;  // a ring has at least one step
      break;
    case Phase::bwd_ring: {
      RingMemberBackward& member = *backward_members_[static_cast<std::size_t>(rank)];
      usp_backward_step(generated, member, grid_, objs_, rank);
      if (member.done()) phase = Phase::bwd_epilogue;
      break;
    }
    case Phase::bwd_epilogue:
      usp_backward_epilogue(generated, groups_, grid_, objs_, rank);
      phase = Phase::done;
      break;
    case Phase::done:
      break;
  }
}

bool UspClassesSource::extend(int rank) {
  Phase& phase = phase_[static_cast<std::size_t>(rank)];
  if (phase == Phase::done) return false;
  RankProgram& program = steps_->raw_program(rank);
  const int begin = static_cast<int>(program.size());
  emit_piece(rank, phase);
  // fold_onto_classes: the representative that plays each peer.
  for (int i = begin; i < static_cast<int>(program.size()); ++i) {
    Op& op = program.mutable_op(i);
    if (op.kind == OpKind::send || op.kind == OpKind::recv) op.peer %= spec_.classes;
  }
  // A piece's receives wait for the previous piece's frees at most (a ring step's receives
  // for the step before's; the all-to-alls' for none).
  steps_->step_done(rank, begin, std::numeric_limits<int>::max(), phase == Phase::done);
  return true;
}

void UspClassesSource::discard_before(int /*rank*/, int /*index*/) {
  // The tracker drops the finished ops from plan().programs itself; the raw programs are
  // trimmed piece by piece in extend().
}

std::string UspClassesSource::whole_plan_digest() const {
  for (const Phase phase : phase_) {
    if (phase != Phase::done) {
      throw std::logic_error("UspClassesSource::whole_plan_digest: a program is not complete");
    }
  }
  return steps_->digest();
}

}  // namespace tilesim
