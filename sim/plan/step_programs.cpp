#include "sim/plan/step_programs.hpp"

namespace tilesim {

StepPrograms::StepPrograms(Plan& plan, Correction correction)
    : plan_(&plan), digests_(plan.programs.size()) {
  if (correction == Correction::eager) plan.merge_form = MergeForm::eager;
  if (correction != Correction::fused) {
    raw_ = plan;  // the objects without block partials; the rewriter adds those to the plan
    rewriter_.emplace(plan);
  }
}

void StepPrograms::step_done(int rank, int begin, int keep, bool program_complete) {
  const auto i = static_cast<std::size_t>(rank);
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
