// Convenience for schedule generators: appends typed ops to a plan's programs.
#pragma once

#include <initializer_list>
#include <span>

#include "sim/plan/plan.hpp"

namespace tilesim {

class ProgramBuilder {
 public:
  explicit ProgramBuilder(Plan& plan) : plan_(&plan) {}

  int compute(int rank, int q_chunk, int kv_chunk, Pass pass, std::span<const int> reads,
              std::span<const int> writes, std::span<const int> after = {});
  // One fused compute over several block pairs (plan.hpp).
  int compute(int rank, std::span<const ChunkPair> pairs, Pass pass, std::span<const int> reads,
              std::span<const int> writes, std::span<const int> after = {});
  int send(int rank, int object, int to, int group, std::span<const int> after = {});
  int recv(int rank, int object, int from, int group, std::span<const int> after = {});
  int merge(int rank, std::span<const int> partials, std::span<const int> targets,
            std::span<const int> after = {});
  int free(int rank, int object, std::span<const int> after = {});

 private:
  RankProgram& program(int rank) { return plan_->programs.at(static_cast<std::size_t>(rank)); }
  Plan* plan_;
};

}  // namespace tilesim
