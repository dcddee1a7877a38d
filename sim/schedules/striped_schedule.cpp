#include "sim/schedules/striped_schedule.hpp"

#include "sim/schedules/ring_schedule.hpp"

namespace tilesim {

Plan make_striped_plan(const AttentionShape& shape, int ranks) {
  return make_pass_kv_ring_plan("striped", shape, ranks, ChunkOwnership::striped);
}

}  // namespace tilesim
