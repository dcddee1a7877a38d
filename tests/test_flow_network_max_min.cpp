// Tests of the pure max-min fair allocation: hand-computed examples, agreement
// with a naive progressive-filling reference, the max-min optimality
// conditions, and bit-identical rates for a component solved alone.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/network/max_min_fair.hpp"
#include "tests/random_pick.hpp"

using namespace tilesim;
using tilesim::test::pick;

namespace {

struct RandomProblem {
  std::vector<double> capacity;
  FairShareProblem problem;
};

RandomProblem random_problem(std::mt19937_64& rng, int links, int flows) {
  RandomProblem out;
  for (int l = 0; l < links; ++l) out.capacity.push_back(1e9 * pick(rng, 1, 10));
  for (int f = 0; f < flows; ++f) {
    std::vector<int> route;
    const int hops = pick(rng, 1, 4);
    while (static_cast<int>(route.size()) < hops) {
      const int link = pick(rng, 0, links - 1);
      if (std::find(route.begin(), route.end(), link) == route.end()) route.push_back(link);
    }
    const double cap = pick(rng, 0, 3) == 0 ? 1e8 * pick(rng, 1, 40) : 0.0;
    out.problem.add_flow(route, cap);
  }
  return out;
}

// Textbook progressive filling: raise every unfrozen flow by the same amount
// until a link saturates or a cap is reached; freeze those flows; repeat.
std::vector<double> naive_water_filling(const std::vector<double>& capacity,
                                        const FairShareProblem& problem) {
  const std::size_t n = problem.flow_count();
  std::vector<double> rate(n, 0.0);
  std::vector<bool> frozen(n, false);
  std::size_t left = n;
  while (left > 0) {
    double delta = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      double used = 0.0;
      int unfrozen = 0;
      for (std::size_t f = 0; f < n; ++f) {
        for (int link : problem.route(f)) {
          if (link != static_cast<int>(l)) continue;
          used += rate[f];
          if (!frozen[f]) ++unfrozen;
        }
      }
      if (unfrozen > 0) delta = std::min(delta, (capacity[l] - used) / unfrozen);
    }
    for (std::size_t f = 0; f < n; ++f) {
      const double cap = problem.rate_cap_bytes_per_s[f];
      if (!frozen[f] && cap > 0.0) delta = std::min(delta, cap - rate[f]);
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (!frozen[f]) rate[f] += delta;
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (frozen[f]) continue;
      bool stop = problem.rate_cap_bytes_per_s[f] > 0.0 &&
                  rate[f] >= problem.rate_cap_bytes_per_s[f] * (1 - 1e-12);
      for (int link : problem.route(f)) {
        double used = 0.0;
        for (std::size_t g = 0; g < n; ++g) {
          for (int other : problem.route(g)) {
            if (other == link) used += rate[g];
          }
        }
        if (used >= capacity[link] * (1 - 1e-12)) stop = true;
      }
      if (stop) {
        frozen[f] = true;
        --left;
      }
    }
  }
  return rate;
}

}  // namespace

TEST_CASE(
    "network max-min: classic max-min example: a long flow bottlenecked on the smaller link") {
  // Link A = 0 (10 GB/s), link B = 1 (4 GB/s). Flow 0 uses A+B, flow 1 uses A,
  // flow 2 uses B. B's share 4/2 = 2 is the first bottleneck: flows 0 and 2 get
  // 2; A has 10 - 2 = 8 left for flow 1 alone.
  FairShareProblem problem;
  problem.add_flow(std::vector<int>{0, 1}, 0.0);
  problem.add_flow(std::vector<int>{0}, 0.0);
  problem.add_flow(std::vector<int>{1}, 0.0);
  const auto rates = max_min_fair_rates(std::vector<double>{10e9, 4e9}, problem);
  CHECK(rates == std::vector<double>{2e9, 8e9, 2e9});
}

TEST_CASE("network max-min: parking lot: one long flow over a chain, one short flow per link") {
  // Links 0,1,2 with 10, 20, 30 GB/s. Flow 0 crosses all three; flow k+1 uses
  // link k only. Shares: 5, 10, 15 -> link 0 first: flows 0 and 1 get 5.
  // Link 1: 20 - 5 = 15 for flow 2; link 2: 30 - 5 = 25 for flow 3.
  FairShareProblem problem;
  problem.add_flow(std::vector<int>{0, 1, 2}, 0.0);
  for (int k = 0; k < 3; ++k) problem.add_flow(std::vector<int>{k}, 0.0);
  const auto rates = max_min_fair_rates(std::vector<double>{10e9, 20e9, 30e9}, problem);
  CHECK(rates == std::vector<double>{5e9, 5e9, 15e9, 25e9});
}

TEST_CASE("network max-min: a flow capped below its fair share frees bandwidth for the others") {
  // One 12 GB/s link, three flows; fair share 4, but flow 0 is capped at 2,
  // so flows 1 and 2 split the remaining 10: 5 each. A cap above the share
  // (flow 2 capped at 7) changes nothing.
  FairShareProblem problem;
  problem.add_flow(std::vector<int>{0}, 2e9);
  problem.add_flow(std::vector<int>{0}, 0.0);
  problem.add_flow(std::vector<int>{0}, 7e9);
  const auto rates = max_min_fair_rates(std::vector<double>{12e9}, problem);
  CHECK(rates == std::vector<double>{2e9, 5e9, 5e9});
}

TEST_CASE("network max-min: empty routes are limited by the cap only, or unbounded") {
  FairShareProblem problem;
  problem.add_flow(std::vector<int>{}, 3e9);
  problem.add_flow(std::vector<int>{}, 0.0);
  const auto rates = max_min_fair_rates(std::vector<double>{1e9}, problem);
  CHECK(rates[0] == 3e9);
  CHECK(std::isinf(rates[1]));
}

TEST_CASE("network max-min: many equal flows on one link share it exactly") {
  // 512 flows, each on the shared link 0 and its own private link 1 + i
  // (100 GB/s): share 51.2 GB/s / 512 = 100 MB/s each.
  std::vector<double> capacity{51.2e9};
  FairShareProblem problem;
  for (int i = 0; i < 512; ++i) {
    capacity.push_back(100e9);
    problem.add_flow(std::vector<int>{0, 1 + i}, 0.0);
  }
  for (double rate : max_min_fair_rates(capacity, problem)) CHECK(rate == Approx(1e8));
}

TEST_CASE("network max-min: heap allocation agrees with naive progressive filling and is max-min") {
  std::mt19937_64 rng(20240611);
  MaxMinFairSolver solver;
  std::vector<double> rates;
  for (int trial = 0; trial < 200; ++trial) {
    const auto [capacity, problem] = random_problem(rng, 8, pick(rng, 1, 25));
    solver.solve(capacity, problem, rates);
    const auto expected = naive_water_filling(capacity, problem);
    for (std::size_t f = 0; f < rates.size(); ++f) {
      CHECK(rates[f] == Approx(expected[f]).epsilon(1e-9));
    }
    // Feasible, and every flow has a bottleneck: its cap, or a saturated link
    // where nobody gets more.
    std::vector<double> load(capacity.size(), 0.0);
    for (std::size_t f = 0; f < rates.size(); ++f) {
      for (int link : problem.route(f)) load[link] += rates[f];
    }
    for (std::size_t l = 0; l < capacity.size(); ++l) CHECK(load[l] <= capacity[l] * (1 + 1e-12));
    for (std::size_t f = 0; f < rates.size(); ++f) {
      bool bottleneck = problem.rate_cap_bytes_per_s[f] > 0 &&
                        rates[f] >= problem.rate_cap_bytes_per_s[f] * (1 - 1e-12);
      for (int link : problem.route(f)) {
        if (load[link] < capacity[link] * (1 - 1e-12)) continue;
        bool largest = true;
        for (std::size_t g = 0; g < rates.size(); ++g) {
          const auto route = problem.route(g);
          if (std::find(route.begin(), route.end(), link) != route.end() &&
              rates[g] > rates[f] * (1 + 1e-12)) {
            largest = false;
          }
        }
        bottleneck = bottleneck || largest;
      }
      CHECK(bottleneck);
    }
  }
}

TEST_CASE("network max-min: a component solved alone gets bit-identical rates") {
  // Two random problems on disjoint link sets (0..7 and 8..15), interleaved in
  // one problem in a random order that keeps each side's relative order.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    auto left = random_problem(rng, 8, pick(rng, 1, 20));
    auto right = random_problem(rng, 8, pick(rng, 1, 20));
    std::vector<double> capacity = left.capacity;
    capacity.insert(capacity.end(), right.capacity.begin(), right.capacity.end());
    FairShareProblem shifted;
    for (std::size_t f = 0; f < right.problem.flow_count(); ++f) {
      std::vector<int> route(right.problem.route(f).begin(), right.problem.route(f).end());
      for (int& link : route) link += 8;
      shifted.add_flow(route, right.problem.rate_cap_bytes_per_s[f]);
    }
    FairShareProblem both;
    std::vector<std::pair<int, std::size_t>> order;  // (side, index in side)
    std::size_t a = 0;
    std::size_t b = 0;
    while (a < left.problem.flow_count() || b < shifted.flow_count()) {
      const bool take_left =
          b == shifted.flow_count() || (a < left.problem.flow_count() && pick(rng, 0, 1) == 0);
      const FairShareProblem& side = take_left ? left.problem : shifted;
      const std::size_t index = take_left ? a++ : b++;
      both.add_flow(side.route(index), side.rate_cap_bytes_per_s[index]);
      order.emplace_back(take_left ? 0 : 1, index);
    }
    const auto rates_left = max_min_fair_rates(capacity, left.problem);
    const auto rates_right = max_min_fair_rates(capacity, shifted);
    const auto rates_both = max_min_fair_rates(capacity, both);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto [side, index] = order[i];
      CHECK(rates_both[i] == (side == 0 ? rates_left[index] : rates_right[index]));
    }
  }
}
