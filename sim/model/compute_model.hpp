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
  // A block of nq x nk tokens with `pairs` attending pairs, `flops` FLOPs.
  double block_time_s(double q_tokens, double kv_tokens, double pairs, double flops,
                      Pass pass) const;
  // The same attention on one GPU: the whole sequence as one block per pass.
  double single_gpu_time_s() const;

 private:
  const Plan* plan_;
  const CalibrationProfile* profile_;
};

}  // namespace tilesim
