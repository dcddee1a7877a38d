#include <catch2/catch.hpp>

#include "sim/model/simulator.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "tests/plan_fixtures.hpp"
#include "tests/sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

struct RingCase {
  int p;
  double block_s;     // one block's compute time
  double transfer_s;  // one KV chunk over one link
};

RingCase ring_case(const AttentionShape& shape, int p, double peak, double link) {
  const double c = static_cast<double>(shape.seq_len / p);
  const double flops = 4.0 * c * c * shape.heads * shape.head_dim * shape.batch;
  return {p, flops / peak, shape.kv_bytes(shape.seq_len / p) / link};
}

}  // namespace

TEST_CASE("ring whose compute dominates takes P blocks: the first block uses the local KV") {
  // Each later block's KV arrives while the previous block computes, so no
  // transfer is exposed: makespan = P * block (the KV of step 0 is local).
  const AttentionShape shape = mha_shape(16 * 1024);
  for (int p : {2, 4, 8}) {
    const double peak = 1e12, link = 1e12;
    const RingCase rc = ring_case(shape, p, peak, link);
    REQUIRE(rc.transfer_s < rc.block_s);
    const SimulationResult r =
        simulate(make_ring_plan(shape, p), star_topology(p, link), ideal_profile(peak));
    INFO("P = " << p);
    CHECK(ps_to_s(r.makespan_ps) == Approx(p * rc.block_s).epsilon(1e-3));
    const Figures f = summarize(r);
    CHECK(f.overlap == Approx(1.0));
    CHECK(f.exposed_comm_s_max == Approx(0.0).margin(1e-9));
  }
}

TEST_CASE("ring whose communication dominates takes P-1 transfers plus one block") {
  const AttentionShape shape = mha_shape(16 * 1024);
  for (int p : {2, 4, 8}) {
    const double peak = 1e15, link = 1e9;
    const RingCase rc = ring_case(shape, p, peak, link);
    REQUIRE(rc.transfer_s > rc.block_s);
    const SimulationResult r =
        simulate(make_ring_plan(shape, p), star_topology(p, link), ideal_profile(peak));
    INFO("P = " << p);
    CHECK(ps_to_s(r.makespan_ps) == Approx((p - 1) * rc.transfer_s + rc.block_s).epsilon(1e-3));
    const Figures f = summarize(r);
    CHECK(f.comm_bytes_per_rank_max == (p - 1) * shape.kv_bytes(shape.seq_len / p));
  }
}

TEST_CASE("alpha and route latency add to every exposed transfer") {
  const AttentionShape shape = mha_shape(8 * 1024);
  const int p = 4;
  const double peak = 1e15, link = 1e9;
  const Picoseconds hop_ps = 1'000'000;  // 1 us per link, 2 links per route
  CalibrationProfile profile = ideal_profile(peak);
  profile.links[static_cast<std::size_t>(LinkClass::nvlink)].alpha_s = 5e-6;
  const RingCase rc = ring_case(shape, p, peak, link);
  const SimulationResult r =
      simulate(make_ring_plan(shape, p), star_topology(p, link, hop_ps), profile);
  const double transfer_s = rc.transfer_s + 5e-6 + 2e-6;
  CHECK(ps_to_s(r.makespan_ps) == Approx((p - 1) * transfer_s + rc.block_s).epsilon(1e-3));
}

TEST_CASE("a per-flow cap below the link rate bounds each transfer") {
  const AttentionShape shape = mha_shape(8 * 1024);
  const int p = 4;
  const double peak = 1e15, link = 4e9, cap = 1e9;
  CalibrationProfile profile = ideal_profile(peak);
  profile.links[static_cast<std::size_t>(LinkClass::nvlink)].flow_cap_bytes_per_s = cap;
  const RingCase rc = ring_case(shape, p, peak, cap);
  const SimulationResult r = simulate(make_ring_plan(shape, p), star_topology(p, link), profile);
  CHECK(ps_to_s(r.makespan_ps) == Approx((p - 1) * rc.transfer_s + rc.block_s).epsilon(1e-3));
}

TEST_CASE("two ring flows that share a link get half of it each") {
  // GPUs 0,1 hang off switch A and 2,3 off switch B, joined by one slow link.
  // Identity placement: only 1->2 crosses A->B and only 3->0 crosses B->A.
  // Placement {0,2,1,3} puts ranks on GPUs 0,2,1,3: sends G0->G2 and G1->G3
  // share A->B, G2->G1 and G3->G0 share B->A, so every transfer takes 2T.
  const AttentionShape shape = mha_shape(8 * 1024);
  const double peak = 1e15, link = 1e9;
  Topology t;
  t.name = "dumbbell";
  t.gpu_model = "test";
  t.gpus_per_node = 4;
  t.node_count = 1;
  const VertexId a = t.add_device({"A", DeviceKind::nvswitch, 0, -1});
  const VertexId b = t.add_device({"B", DeviceKind::nvswitch, 0, -1});
  std::vector<VertexId> g;
  for (int i = 0; i < 4; ++i)
    g.push_back(t.add_device({fmt::format("g{}", i), DeviceKind::gpu, 0, -1}));
  t.connect(g[0], a, 100 * link, 0, LinkClass::nvlink);
  t.connect(g[1], a, 100 * link, 0, LinkClass::nvlink);
  t.connect(g[2], b, 100 * link, 0, LinkClass::nvlink);
  t.connect(g[3], b, 100 * link, 0, LinkClass::nvlink);
  t.connect(a, b, link, 0, LinkClass::nvlink);
  const RingCase rc = ring_case(shape, 4, peak, link);
  SimulationOptions spread;
  spread.placement = {0, 2, 1, 3};
  const SimulationResult shared =
      simulate(make_ring_plan(shape, 4), t, ideal_profile(peak), spread);
  // Each step: 0->2 and 1->3 share A->B at link/2; 2->1 and 3->0 share B->A.
  CHECK(ps_to_s(shared.makespan_ps) == Approx(3 * 2 * rc.transfer_s + rc.block_s).epsilon(1e-3));
  const SimulationResult apart = simulate(make_ring_plan(shape, 4), t, ideal_profile(peak));
  CHECK(ps_to_s(apart.makespan_ps) == Approx(3 * rc.transfer_s + rc.block_s).epsilon(1e-2));
}

TEST_CASE("compute slows down for exactly the time a transfer touches the GPU") {
  // Slowdown s = 1 (half speed while communicating), transfer T = C/4.
  // P = 2: group 0 runs [0, T] under compute 0, which ends at
  //   T + (C - T/2) = C + T/2; compute 1 runs alone: makespan 2C + T/2.
  // P = 3: groups 0 and 1 run back to back over [0, 2T] under compute 0:
  //   makespan 3C + 2T/2 = 3C + T.
  const AttentionShape shape = mha_shape(12 * 1024);
  for (int p : {2, 3}) {
    const double peak = 1e12;
    const RingCase unit = ring_case(shape, p, peak, 1.0);
    const double c = unit.block_s;
    const double link = unit.transfer_s / (c / 4);  // so that T = C / 4
    CalibrationProfile profile = ideal_profile(peak);
    profile.comm_slowdown = 1.0;
    const SimulationResult r = simulate(make_ring_plan(shape, p), star_topology(p, link), profile);
    INFO("P = " << p);
    const double t = c / 4;
    CHECK(ps_to_s(r.makespan_ps) == Approx(p * c + (p - 1) * t / 2).epsilon(1e-4));
  }
}

TEST_CASE("latency-bound messages do not slow compute; the threshold is the profile's") {
  // The case above with comm_slowdown_min_bytes just above one KV chunk: the transfers
  // are then latency-bound by the profile's definition and the computes run at full
  // speed: makespan P x C (the first block uses the local KV, the others arrive in time).
  const AttentionShape shape = mha_shape(12 * 1024);
  for (int p : {2, 3}) {
    const double peak = 1e12;
    const RingCase unit = ring_case(shape, p, peak, 1.0);
    const double c = unit.block_s;
    const double link = unit.transfer_s / (c / 4);
    CalibrationProfile profile = ideal_profile(peak);
    profile.comm_slowdown = 1.0;
    profile.comm_slowdown_min_bytes = shape.kv_bytes(shape.seq_len / p) + 1;
    const SimulationResult r = simulate(make_ring_plan(shape, p), star_topology(p, link), profile);
    INFO("P = " << p);
    CHECK(ps_to_s(r.makespan_ps) == Approx(p * c).epsilon(1e-6));
  }
}
