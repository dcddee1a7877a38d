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
  // A compute op: its block pairs' times summed plus one launch overhead (a
  // fused op runs its pairs back to back in one launch).
  double compute_time_s(const RankProgram& program, int index) const;
  // One (q chunk, kv chunk) pair: its token blocks at the pair's efficiency
  // (by its size sqrt(nq * nk)), causally cut blocks also at the causal factor.
  double pair_time_s(Pass pass, ChunkPair pair) const;
  // The same attention on one GPU: the whole sequence as one block per pass.
  double single_gpu_time_s() const;

 private:
  const Plan* plan_;
  const CalibrationProfile* profile_;
};

}  // namespace tilesim
