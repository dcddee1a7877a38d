// Ranks that share compute: with `cores` set, k > cores computes running on one node each
// progress at cores / k. Closed forms on a compute-bound ring (transfers take ~0 s, so every
// rank computes all the time): makespan = P * block * max(1, P / cores).
#include <catch2/catch.hpp>

#include "sim/model/simulator.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "tests/plan_fixtures.hpp"
#include "tests/sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

double block_s(const AttentionShape& shape, int p, double peak) {
  const double c = static_cast<double>(shape.seq_len / p);
  return 4.0 * c * c * shape.heads * shape.head_dim * shape.batch / peak;
}

double ring_makespan_s(int p, double cores) {
  const AttentionShape shape = mha_shape(16 * 1024);
  CalibrationProfile profile = ideal_profile(1e12);
  profile.compute_cores = cores;
  return ps_to_s(simulate(make_ring_plan(shape, p), star_topology(p, 1e18), profile).makespan_ps);
}

}  // namespace

TEST_CASE("calibration: 4 ranks on 2 cores take twice as long as on 4 devices") {
  const AttentionShape shape = mha_shape(16 * 1024);
  const double alone = 4 * block_s(shape, 4, 1e12);
  CHECK(ring_makespan_s(4, 0.0) == Approx(alone).epsilon(1e-6));
  CHECK(ring_makespan_s(4, 2.0) == Approx(2.0 * alone).epsilon(1e-6));
  CHECK(ring_makespan_s(4, 3.0) == Approx(4.0 / 3.0 * alone).epsilon(1e-6));
}

TEST_CASE("calibration: as many cores as ranks (or more) changes nothing") {
  CHECK(ring_makespan_s(4, 4.0) == ring_makespan_s(4, 0.0));
  CHECK(ring_makespan_s(2, 8.0) == ring_makespan_s(2, 0.0));
  CHECK(ring_makespan_s(2, 1.0) == Approx(2.0 * ring_makespan_s(2, 0.0)).epsilon(1e-6));
}

TEST_CASE("calibration: sharing is per node, ranks on different nodes do not share") {
  // Two nodes of two GPUs each; 4 ranks with cores = 1 per node: 2 ranks share each node.
  Topology two_nodes;
  two_nodes.name = "two";
  two_nodes.gpu_model = "test";
  two_nodes.gpus_per_node = 2;
  two_nodes.node_count = 2;
  const VertexId sw = two_nodes.add_device({"switch", DeviceKind::nvswitch, -1, -1});
  for (int g = 0; g < 4; ++g) {
    const VertexId v = two_nodes.add_device({fmt::format("gpu{}", g), DeviceKind::gpu, g / 2, -1});
    two_nodes.connect(v, sw, 1e18, 0, LinkClass::nvlink);
  }
  const AttentionShape shape = mha_shape(16 * 1024);
  CalibrationProfile profile = ideal_profile(1e12);
  profile.compute_cores = 1.0;
  const double shared = ps_to_s(simulate(make_ring_plan(shape, 4), two_nodes, profile).makespan_ps);
  CHECK(shared == Approx(2.0 * 4 * block_s(shape, 4, 1e12)).epsilon(1e-6));
}
