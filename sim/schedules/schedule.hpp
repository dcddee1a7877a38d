// Which schedule to generate, and the dispatcher over the generators.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/plan/attention_shape.hpp"
#include "sim/plan/output_correction.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

// A schedule that cannot be built for this shape (e.g. tokens not divisible by
// the GPU count). The scenario layer turns it into an InputError naming the key.
class ScheduleError : public std::invalid_argument {
 public:
  ScheduleError(std::string key, const std::string& message)
      : std::invalid_argument(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Schedule kinds; the scenario's `schedule.kind` takes these names.
inline constexpr const char* kScheduleKinds[] = {
    "ring", "zigzag", "striped", "pass_q", "allgather_kv", "ulysses", "usp", "double_ring", "mesh"};

// How a mesh tile is chosen: given ([a, b]); fastest (`auto`: the tuner's fastest tile and
// placement within the memory budget); min_bytes (`min-bytes`: the tile that receives the
// fewest bytes per rank, placement kept).
enum class MeshTileChoice : std::uint8_t { given, fastest, min_bytes };

// How tokens are assigned to ranks: by the schedule's own layout (contiguous, zigzag, striped)
// or by attention work (work_balance.hpp; ring and allgather_kv).
enum class TokenBalance : std::uint8_t { layout, work };

struct ScheduleSpec {
  std::string kind = "ring";
  int gpus = 1;
  int gpus_per_node = 8;  // from the topology; placement and double-ring use it
  // mesh: tile a x b (a*b = gpus). A scenario may leave the choice to tilesim (auto,
  // min-bytes); prepare_scenario resolves it once (resolve_mesh_tile), so the generator
  // only ever sees tile_choice == given.
  int tile_a = 0;
  int tile_b = 0;
  MeshTileChoice tile_choice = MeshTileChoice::given;
  // mesh: which GPU plays which logical rank (node-major | q-group-major | kv-group-major).
  std::string placement = "node-major";
  int ulysses_degree = 0;  // usp: u ranks of all-to-all inside each ring group (0 = not set)
  int inner_ring = 0;      // double_ring: ranks per inner ring (0 = gpus_per_node)
  double memory_budget_bytes = 0.0;  // 0 = no budget
  // How a step's kernel output joins the running accumulators (output_correction.hpp):
  // separate (FlashAttention-based rings, the default), eager (the same, costed as PyTorch's
  // op-by-op form) or fused.
  Correction correction = Correction::separate;
  TokenBalance balance = TokenBalance::layout;  // schedule.balance
};

// The generator's plan, with the output correction of spec.correction applied.
Plan make_plan(const AttentionShape& shape, const ScheduleSpec& spec);

}  // namespace tilesim
