#include "sim/plan/zigzag_schedule.hpp"

#include "sim/plan/ring_schedule.hpp"

namespace tilesim {

Plan make_zigzag_plan(const AttentionShape& shape, int ranks) {
  return make_pass_kv_ring_plan("zigzag", shape, ranks, ChunkOwnership::zigzag);
}

}  // namespace tilesim
