// The flow transfer model behind the simulator's TransferModel seam: phases, latencies and
// the GPU traffic shares that drive compute interference, against hand-computed values.
#include <catch2/catch.hpp>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/model/flow_transfer_model.hpp"
#include "tests/sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

// A calendar that only records bookings; the test plays the simulator's event loop.
class RecordingCalendar final : public TransferCalendar {
 public:
  void wake_at(Picoseconds at_ps, std::int64_t token) override {
    booked.emplace_back(at_ps, token);
  }
  std::vector<std::pair<Picoseconds, std::int64_t>> booked;
};

// GPU0 - GPU1 - GPU2 in a line of direct links (no switch): 0 -> 2 relays through GPU1.
Topology line_topology(double bytes_per_s) {
  Topology t;
  t.name = "line";
  t.gpu_model = "test";
  t.gpus_per_node = 3;
  t.node_count = 1;
  const VertexId g0 = t.add_device({"gpu0", DeviceKind::gpu, 0, -1});
  const VertexId g1 = t.add_device({"gpu1", DeviceKind::gpu, 0, -1});
  const VertexId g2 = t.add_device({"gpu2", DeviceKind::gpu, 0, -1});
  t.connect(g0, g1, bytes_per_s, 0, LinkClass::nvlink);
  t.connect(g1, g2, bytes_per_s, 0, LinkClass::nvlink);
  return t;
}

}  // namespace

// The model keeps a reference to its profile; this test file once passed a temporary one,
// which ASan reported as a stack-use-after-scope in post(). A temporary must not compile.
static_assert(!std::is_constructible_v<FlowTransferModel, const Topology&, CalibrationProfile&&,
                                       TransferCalendar&, bool>);
static_assert(std::is_constructible_v<FlowTransferModel, const Topology&, const CalibrationProfile&,
                                      TransferCalendar&, bool>);

TEST_CASE("flow transfer model: alpha, then bytes / capacity, then the route latency") {
  // Star of 2 GPUs, links of 1e11 B/s and 500 ps; nvlink alpha 2 us, efficiency 0.5:
  // 1e6 B at 5e10 B/s = 20,000,000 ps. Posted at 1000: flow from 1000 + 2e6 ps, its last
  // byte at 2,001,000 + 2e7 = 22,001,000, done one route latency (2 x 500 ps) later.
  const Topology t = star_topology(2, 1e11, 500);
  CalibrationProfile profile = ideal_profile(1e12);
  profile.links[static_cast<std::size_t>(LinkClass::nvlink)].alpha_s = 2e-6;
  profile.links[static_cast<std::size_t>(LinkClass::nvlink)].efficiency = 0.5;
  RecordingCalendar calendar;
  FlowTransferModel model(t, profile, calendar, false);
  const TransferId id = model.post({0, 1, 1e6}, 1000);
  REQUIRE(calendar.booked == std::vector<std::pair<Picoseconds, std::int64_t>>{{2'001'000, id}});
  model.settle(1000);
  CHECK_FALSE(model.next_change_ps());
  CHECK(model.gpu_traffic_share(0) == 0.0);  // alpha: no bytes move yet
  model.wake(id, 2'001'000);
  model.settle(2'001'000);
  CHECK(model.next_change_ps() == 22'001'000);
  model.advance(22'001'000);
  REQUIRE(calendar.booked.size() == 2);
  CHECK(calendar.booked[1] == std::make_pair(Picoseconds{22'002'000}, id));
  std::vector<TransferId> done;
  model.take_completed(done);
  CHECK(done.empty());
  model.wake(id, 22'002'000);
  model.take_completed(done);
  CHECK(done == std::vector<TransferId>{id});
}

TEST_CASE("flow transfer model: a GPU's traffic share is its flows' rate over one flow's") {
  // Star of 3 GPUs, 1e11 B/s links. GPU0 -> GPU2 and GPU1 -> GPU2 (1 MB each) share the
  // switch -> GPU2 link: 5e10 B/s each. R_gpu = 1e11 (no caps): senders 0.5 each, the
  // receiver (5e10 + 5e10) / 1e11 = 1.
  const Topology t = star_topology(3, 1e11);
  RecordingCalendar calendar;
  const CalibrationProfile profile = ideal_profile(1e12);
  FlowTransferModel model(t, profile, calendar, false);
  const TransferId a = model.post({0, 2, 1e6}, 0);
  const TransferId b = model.post({1, 2, 1e6}, 0);
  model.wake(a, 0);
  model.wake(b, 0);
  model.settle(0);
  CHECK(model.gpu_traffic_share(0) == 0.5);
  CHECK(model.gpu_traffic_share(1) == 0.5);
  CHECK(model.gpu_traffic_share(2) == 1.0);
  std::vector<int> changed;
  model.take_gpus_with_changed_traffic(changed);
  CHECK(changed == std::vector<int>{0, 1, 2});
  // Both end at 1e6 / 5e10 s = 20,000,000 ps: every share back to exactly 0.
  model.advance(20'000'000);
  model.settle(20'000'000);
  for (int g = 0; g < 3; ++g) CHECK(model.gpu_traffic_share(g) == 0.0);

  // With a flow cap of 2.5e10 B/s, R_gpu = 2.5e10: one capped flow alone is share 1, so
  // comm_slowdown keeps meaning "one transfer at full speed", what calibration measures.
  CalibrationProfile capped = ideal_profile(1e12);
  capped.links[static_cast<std::size_t>(LinkClass::nvlink)].flow_cap_bytes_per_s = 2.5e10;
  FlowTransferModel cap_model(t, capped, calendar, false);
  const TransferId c = cap_model.post({0, 1, 1e6}, 0);
  cap_model.wake(c, 0);
  cap_model.settle(0);
  CHECK(cap_model.gpu_traffic_share(0) == 1.0);
  CHECK(cap_model.gpu_traffic_share(1) == 1.0);
  CHECK(cap_model.gpu_traffic_share(2) == 0.0);
}

TEST_CASE("flow transfer model: relay GPUs carry traffic; latency-bound messages none") {
  const Topology t = line_topology(1e11);
  RecordingCalendar calendar;
  CalibrationProfile profile = ideal_profile(1e12);
  profile.comm_slowdown_min_bytes = 65536;
  FlowTransferModel model(t, profile, calendar, false);
  // 1 MB from GPU0 to GPU2 through GPU1 at 1e11 B/s: all three at share 1.
  const TransferId big = model.post({0, 2, 1e6}, 0);
  // 4 KB (an LSE) from GPU2 to GPU1: below 64 KiB, latency-bound, loads no GPU.
  const TransferId small = model.post({2, 1, 4096}, 0);
  model.wake(big, 0);
  model.wake(small, 0);
  model.settle(0);
  CHECK(model.gpu_traffic_share(0) == 1.0);
  CHECK(model.gpu_traffic_share(1) == 1.0);
  CHECK(model.gpu_traffic_share(2) == 1.0);
  // The small one ends at 4096 / 1e11 s = 40,960 ps; the big one still loads all three.
  CHECK(model.next_change_ps() == 40'960);
  model.advance(40'960);
  model.settle(40'960);
  CHECK(model.gpu_traffic_share(1) == 1.0);
  CHECK(model.gpu_traffic_share(2) == 1.0);
  // Alone, the 4 KB message moves no GPU's share off 0.
  FlowTransferModel lone(t, profile, calendar, false);
  const TransferId lse = lone.post({2, 1, 4096}, 0);
  lone.wake(lse, 0);
  lone.settle(0);
  CHECK(lone.gpu_traffic_share(1) == 0.0);
  CHECK(lone.gpu_traffic_share(2) == 0.0);
}
