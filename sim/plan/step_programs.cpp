#include "sim/plan/step_programs.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim {

StepPrograms::StepPrograms(Plan& plan, Correction correction, int steps_named)
    : plan_(&plan),
      digests_(plan.programs.size()),
      steps_named_(steps_named),
      recent_begins_(plan.programs.size(), {0, 0}) {
  if (steps_named < 1 || steps_named > 2) {
    throw std::invalid_argument("StepPrograms: a step names the one or two steps before it");
  }
  if (correction == Correction::eager) plan.merge_form = MergeForm::eager;
  if (correction != Correction::fused) {
    raw_ = plan;  // the objects without block partials; the rewriter adds those to the plan
    rewriter_.emplace(plan);
  }
}

void StepPrograms::step_done(int rank, int begin, int oldest_awaited, bool program_complete) {
  const auto i = static_cast<std::size_t>(rank);
  auto& [older, previous] = recent_begins_[i];
  const int keep = std::min(steps_named_ == 2 ? older : previous, oldest_awaited);
  older = previous;
  previous = begin;
  if (raw_) {
    RankProgram& raw = raw_->programs[i];
    rewriter_->rewrite(rank, raw, begin, plan_->programs[i]);
    raw.discard_before(keep);
    rewriter_->discard_before(rank, keep);
    if (program_complete) rewriter_->forget(rank);
  }
  digests_[i].add_new_ops(plan_->programs[i]);
}

std::string StepPrograms::digest() const {
  PlanDigestBuilder digest(*plan_);
  for (const ProgramDigest& program : digests_) digest.add_program(program);
  return digest.value();
}

}  // namespace tilesim
