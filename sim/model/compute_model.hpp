// Durations of compute-stream ops (see calibration_profile.hpp for the model).
#pragma once

#include "sim/core/units.hpp"
#include "sim/model/calibration_profile.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

class ComputeModel {
 public:
  ComputeModel(const Plan& plan, const CalibrationProfile& profile)
      : plan_(&plan), profile_(&profile) {}

  // Duration of a compute or merge op when no communication slows it down.
  Picoseconds duration_ps(const RankProgram& program, int index) const;
  // A compute op: its chunks' block pairs summed, each at the op's efficiency
  // (by its size sqrt(nq * nk)), cut pairs also at the causal factor.
  double compute_time_s(const Op& op) const;
  // The same attention on one GPU: the whole sequence as one block per pass.
  double single_gpu_time_s() const;

 private:
  const Plan* plan_;
  const CalibrationProfile* profile_;
};

}  // namespace tilesim
