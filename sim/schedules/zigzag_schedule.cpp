#include "sim/schedules/zigzag_schedule.hpp"

#include "sim/schedules/ring_schedule.hpp"

namespace tilesim {

Plan make_zigzag_plan(const AttentionShape& shape, int ranks) {
  return make_pass_kv_ring_plan("zigzag", shape, ranks, ChunkOwnership::zigzag);
}

}  // namespace tilesim
