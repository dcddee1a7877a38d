// link_utilisation against hand-computed time-weighted means.
#include <catch2/catch.hpp>

#include "sim/report/link_utilisation.hpp"

namespace tilesim {
namespace {

// Two GPUs joined by one 100 B/s NVLink: links 0 (a->b) and 1 (b->a), class capacity 200 B/s.
Topology two_gpus() {
  Topology t;
  const VertexId a = t.add_device({"a", DeviceKind::gpu, 0, 0});
  const VertexId b = t.add_device({"b", DeviceKind::gpu, 0, 1});
  t.connect(a, b, 100.0, 0, LinkClass::nvlink);
  return t;
}

TEST_CASE("link utilisation is the time-weighted share of the class's capacity") {
  const Topology t = two_gpus();
  SimulationResult r;
  r.makespan_ps = 4;
  // Link 0 full over [0, 2); link 1 at half from t = 1 to the end.
  r.link_samples = {{0, 0, 100.0}, {2, 0, 0.0}, {1, 1, 50.0}};
  const std::vector<ClassUtilisation> u = link_utilisation(t, r, 2);
  REQUIRE(u.size() == 1);
  CHECK(u[0].cls == LinkClass::nvlink);
  REQUIRE(u[0].bins.size() == 2);
  // Bin [0, 2): (100 x 2 + 50 x 1) byte-ps / (200 B/s x 2 ps) = 0.625.
  CHECK(u[0].bins[0] == Approx(0.625));
  // Bin [2, 4): 50 x 2 / (200 x 2) = 0.25.
  CHECK(u[0].bins[1] == Approx(0.25));
}

TEST_CASE("link utilisation without samples is zero, and classes without links are left out") {
  const Topology t = two_gpus();
  SimulationResult r;
  r.makespan_ps = 10;
  const std::vector<ClassUtilisation> u = link_utilisation(t, r, 5);
  REQUIRE(u.size() == 1);
  for (double v : u[0].bins) CHECK(v == 0.0);
}

TEST_CASE("link utilisation ends when the bins' width does not divide the makespan exactly") {
  const Topology t = two_gpus();
  SimulationResult r;
  r.makespan_ps = 220'024'000'000;   // 220.024 ms over 200 bins: 200 x width rounds below it
  r.link_samples = {{0, 0, 200.0}};  // link 0 at twice its bandwidth: class utilisation 1
  const std::vector<ClassUtilisation> u = link_utilisation(t, r, 200);
  REQUIRE(u.size() == 1);
  REQUIRE(u[0].bins.size() == 200);
  CHECK(u[0].bins.back() == Approx(1.0));
}

}  // namespace
}  // namespace tilesim
