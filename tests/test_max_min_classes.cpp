// Flow classes in the max-min allocation: a FlowNetwork flow with a per-link multiplicity
// (FlowSpec::link_multiplicity) stands for that many identical flows on the link, so the
// quotient of an equitable partition, solved by FlowNetwork, gives the full problem's
// rates, solved flow by flow by the independent MaxMinFairSolver (max_min_fair.hpp). A
// hand-computed instance (exact in binary, so equal to the bit) and random cyclic lifts: r
// copies of each link and flow class, flow (F, i) crossing links (L, i + s mod r) for the
// shifts s in S(F, L), so every link of class L carries |S(F, L)| flows of class F and every
// flow of F crosses |S(F, L)| links of L: an equitable partition whose quotient has
// multiplicity |S(F, L)|.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/network/flow_network.hpp"
#include "sim/network/max_min_fair.hpp"
#include "tests/random_pick.hpp"

using namespace tilesim;
using tilesim::test::pick;

namespace {

// Rates at time 0 of flow classes (route, multiplicity per link, cap), in the order given.
std::vector<double> quotient_rates(const std::vector<double>& capacity_bytes_per_s,
                                   const std::vector<FlowSpec>& classes) {
  FlowNetwork net(capacity_bytes_per_s);
  std::vector<FlowId> ids;
  for (const FlowSpec& spec : classes) ids.push_back(net.start(spec, 0));
  net.settle(0);
  std::vector<double> rates;
  for (FlowId id : ids) rates.push_back(net.rate_bytes_per_s(id));
  return rates;
}

FlowSpec flow_class(std::vector<int> links, std::vector<int> multiplicity, double cap) {
  FlowSpec spec;
  spec.links = std::move(links);
  spec.bytes = 1e3;  // ends after time 0 at every rate here (at most 10e9 B/s)
  spec.rate_cap_bytes_per_s = cap;
  spec.link_multiplicity = std::move(multiplicity);
  return spec;
}

}  // namespace

TEST_CASE("max-min flow classes: a hand-computed quotient equals the full problem") {
  // Full: NVLink links 0..3 (4 B/s), uplinks 4, 5 (4 B/s). A_i on link i; B_i on link i and
  // uplink 4 + i/2; C_j on uplink 4 + j, capped at 1 B/s. Filling: C's cap (1) is lowest,
  // then an uplink's two B share (4 - 1) / 2 = 1.5 below NVLink's 4 / 2, then A gets the
  // NVLink's rest 4 - 1.5 = 2.5.
  FairShareProblem full;
  for (int i = 0; i < 4; ++i) full.add_flow(std::vector<int>{i}, 0.0);
  for (int i = 0; i < 4; ++i) full.add_flow(std::vector<int>{i, 4 + i / 2}, 0.0);
  for (int j = 0; j < 2; ++j) full.add_flow(std::vector<int>{4 + j}, 1.0);
  const std::vector<double> rates = max_min_fair_rates(std::vector<double>(6, 4.0), full);
  for (int i = 0; i < 4; ++i) {
    CHECK(rates[static_cast<std::size_t>(i)] == 2.5);
    CHECK(rates[static_cast<std::size_t>(4 + i)] == 1.5);
  }
  CHECK(rates[8] == 1.0);
  CHECK(rates[9] == 1.0);

  // Quotient: link class 0 (NVLink), 1 (uplink); B meets 2 flows of B on an uplink.
  const std::vector<double> q = quotient_rates(
      std::vector<double>(2, 4.0),
      {flow_class({0}, {1}, 0.0), flow_class({0, 1}, {1, 2}, 0.0), flow_class({1}, {1}, 1.0)});
  CHECK(q == std::vector<double>{2.5, 1.5, 1.0});
}

TEST_CASE("max-min flow classes: random cyclic lifts solve to their quotient's rates") {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    const int link_classes = pick(rng, 1, 5);
    const int flow_classes = pick(rng, 1, 6);
    const int r = pick(rng, 2, 8);
    std::vector<double> class_capacity;
    for (int l = 0; l < link_classes; ++l) class_capacity.push_back(1e9 * pick(rng, 1, 10));
    std::vector<double> full_capacity;
    for (int l = 0; l < link_classes; ++l) {
      for (int i = 0; i < r; ++i)
        full_capacity.push_back(class_capacity[static_cast<std::size_t>(l)]);
    }
    std::vector<FlowSpec> quotient;
    FairShareProblem full;
    std::vector<std::vector<std::vector<int>>> shifts(static_cast<std::size_t>(flow_classes));
    std::vector<double> caps;
    for (int f = 0; f < flow_classes; ++f) {
      std::vector<int> links, multiplicity;
      auto& s = shifts[static_cast<std::size_t>(f)];
      s.resize(static_cast<std::size_t>(link_classes));
      for (int l = 0; l < link_classes; ++l) {
        if (pick(rng, 0, 1) == 0 && !(l == link_classes - 1 && links.empty())) continue;
        // Distinct shifts, so no route repeats a link.
        for (int shift = 0; shift < r; ++shift) {
          if (pick(rng, 0, 2) == 0) s[static_cast<std::size_t>(l)].push_back(shift);
        }
        if (s[static_cast<std::size_t>(l)].empty()) s[static_cast<std::size_t>(l)].push_back(0);
        links.push_back(l);
        multiplicity.push_back(static_cast<int>(s[static_cast<std::size_t>(l)].size()));
      }
      caps.push_back(pick(rng, 0, 3) == 0 ? 1e8 * pick(rng, 1, 30) : 0.0);
      quotient.push_back(flow_class(links, multiplicity, caps.back()));
    }
    for (int f = 0; f < flow_classes; ++f) {
      for (int i = 0; i < r; ++i) {
        std::vector<int> route;
        for (int l = 0; l < link_classes; ++l) {
          for (int shift : shifts[static_cast<std::size_t>(f)][static_cast<std::size_t>(l)]) {
            route.push_back(l * r + (i + shift) % r);
          }
        }
        full.add_flow(route, caps[static_cast<std::size_t>(f)]);
      }
    }
    const std::vector<double> q = quotient_rates(class_capacity, quotient);
    const std::vector<double> rates = max_min_fair_rates(full_capacity, full);
    for (int f = 0; f < flow_classes; ++f) {
      for (int i = 0; i < r; ++i) {
        INFO("trial " << trial << " class " << f << " copy " << i);
        // Equal in exact arithmetic; the two sides freeze the flows of a link in different
        // orders, so their subtractions may round differently in the last bits.
        CHECK(rates[static_cast<std::size_t>(f * r + i)] ==
              Approx(q[static_cast<std::size_t>(f)]).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("max-min flow classes: a plain flow beside a class counts once on its link") {
  // One class of 3 flows and one plain flow on a link of 8 B/s: 4 flows, 2 B/s each.
  const std::vector<double> q = quotient_rates(
      std::vector<double>{8.0}, {flow_class({0}, {3}, 0.0), flow_class({0}, {}, 0.0)});
  CHECK(q == std::vector<double>{2.0, 2.0});
}
