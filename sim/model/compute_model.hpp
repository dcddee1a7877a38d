// Durations of compute-stream ops (see calibration_profile.hpp for the model).
//
// One compute op is one kernel call (the runtime launches one per op): its q_tokens and kv_tokens
// are the tokens of the distinct q and kv chunks among its pairs (a fused op over a x b pairs is
// one call over a q chunks and b kv chunks), heads = heads / plan.head_groups (a head-split chunk
// holds that share of the heads), batch = the shape's batch. The call's efficiency
// (CalibrationProfile::call_efficiency: table by size, occupancy by CTAs) applies to every
// block of the op; causally cut blocks also pay the causal factor at the block size.
// Lookups that leave a profile table are collected (TableRangeLog) and reported once per table
// end by warnings(): the one-GPU reference is logged under its own name, because its single
// S-token block is usually far past the tables and affects only the speedup figure.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/model/calibration_profile.hpp"
#include "sim/model/table_range_log.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

class ComputeModel {
 public:
  ComputeModel(const Plan& plan, const CalibrationProfile& profile)
      : plan_(&plan), profile_(&profile) {}

  // Duration of a compute or merge op when no communication slows it down.
  Picoseconds duration_ps(const RankProgram& program, int index) const;
  // A program's compute stream alone: its computes' and merges' durations summed (the ops it
  // still holds, from first_index()).
  Picoseconds compute_stream_ps(const RankProgram& program) const;
  // A compute op: its block pairs' times summed plus one launch overhead (a
  // fused op runs its pairs back to back in one launch).
  double compute_time_s(const RankProgram& program, int index) const;
  // A compute-stream op's duration_ps and FLOPs (Plan::compute_flops; 0 for a merge), from one
  // lookup of the call memo below.
  struct StreamCost {
    Picoseconds duration_ps = 0;
    double flops = 0.0;
  };
  StreamCost stream_cost(const RankProgram& program, int index) const;
  // The kernel call of an op over `pairs`.
  AttentionCall call_of(Pass pass, std::span<const ChunkPair> pairs) const;
  // The work (unmasked pairs) of each cta_tokens tile of the tiled chunks (q chunks in the
  // forward, kv chunks in the backward), in grid order; empty when the tiles are equal, the
  // mask hides nothing or the profile has no occupancy model (occupancy.hpp).
  std::vector<double> tile_work(Pass pass, std::span<const ChunkPair> pairs,
                                const std::vector<int>& tiled_chunks) const;
  // The same for the whole sequence as one call (the one-GPU reference).
  std::vector<double> whole_sequence_tile_work(Pass pass) const;
  // One (q chunk, kv chunk) pair's token blocks at call efficiency e, causally cut blocks also
  // at the causal factor.
  double pair_time_s(Pass pass, ChunkPair pair, double e, int* cut_blocks = nullptr) const;
  // The same attention on one GPU: the whole sequence as one block per pass.
  double single_gpu_time_s() const;
  // One line per profile table end that lookups left so far (deterministic order).
  std::vector<std::string> warnings() const;

 private:
  const Plan* plan_;
  const CalibrationProfile* profile_;
  // Lookups outside the tables: a record of what the const cost queries saw, not state
  // that changes a cost.
  mutable TableRangeLog log_;
  mutable TableRangeLog single_gpu_log_;
  // call_efficiency by call: a causal call's list schedule costs O(CTAs log slots) and the ops of
  // a plan repeat a few distinct calls (a memo of a pure function, not state that changes a cost).
  using CallKey = std::tuple<Pass, int, double, double, int, int, std::vector<double>>;
  mutable std::map<CallKey, double> efficiency_memo_;
  double efficiency(const AttentionCall& call) const;
  // compute_time_s and the FLOPs by the op's pass and its pairs' blocks, for a head-split
  // plan only: the u ranks of a Ulysses group run calls over the same positions for different
  // heads (chunk ids differ, blocks do not), so u - 1 of u calls are found here. The key is all
  // the time depends on: each pair's chunks' tokens and blocks, in the order the pairs are
  // summed (a call pairs distinct chunks, so call_of's tiles follow the blocks). Each entry also
  // counts its causally cut blocks, whose causal_factor lookups a hit replays, so the range log
  // (and its warnings) reads as without the memo. Cleared when its keys reach kCallMemoWords
  // words (32 MiB; a fused USP u = 32 call's key is 8K words), since the u calls of one step
  // run close together.
  struct CallTime {
    double time_s = 0.0;
    double flops = 0.0;
    int cut_blocks = 0;
  };
  struct BlocksHash {
    std::size_t operator()(const std::vector<std::int64_t>& key) const;
  };
  static constexpr std::size_t kCallMemoWords = std::size_t{1} << 22;
  mutable std::unordered_map<std::vector<std::int64_t>, CallTime, BlocksHash> call_time_memo_;
  mutable std::size_t call_time_memo_words_ = 0;
  double uncached_compute_time_s(Pass pass, std::span<const ChunkPair> pairs,
                                 int* cut_blocks) const;
  std::vector<std::int64_t> memo_key(const RankProgram& program, int index) const;
  // The memo's entry for a compute op (costed and stored on a miss; a hit replays its lookups).
  CallTime memoized_call(const RankProgram& program, int index) const;
};

}  // namespace tilesim
