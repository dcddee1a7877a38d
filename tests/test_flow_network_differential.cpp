// FlowNetwork against an independent exact max-min simulation (a differential test).
//
// The oracle shares no code with sim/network: in long double it re-solves the max-min fair
// allocation of every active flow from scratch at every event (progressive filling, one
// bottleneck at a time: the smallest of the links' fair shares and the unfrozen flows' caps
// is frozen), moves every flow's remaining bytes by rate x elapsed time, and takes the next
// event as the earliest start or finish. It applies the model's one rounding rule, stated in
// flow_network.hpp: a flow's completion is the first whole picosecond at or after its exact
// finish. It has no anchors, components, dirty links, finish queue or drift guard.
//
// Random flow sets: a few hundred links of 10-400 GB/s, routes of 1-6 distinct links,
// staggered starts, sizes log-uniform in 1 kB - 1 GB, a quarter of the flows capped.
// Every completion must agree within 1e-6 relative (in practice a picosecond or less).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "sim/network/flow_network.hpp"
#include "tests/random_pick.hpp"

using namespace tilesim;
using tilesim::test::pick;

namespace {

struct OracleFlow {
  std::vector<int> links;
  long double bytes = 0;
  long double cap_bytes_per_s = 0;  // 0 = none
  Picoseconds start_ps = 0;
};

// Max-min fair rates by progressive filling, re-solved from scratch.
std::vector<long double> max_min_rates(const std::vector<long double>& capacity,
                                       const std::vector<const OracleFlow*>& flows) {
  const std::size_t n = flows.size();
  std::vector<long double> rate(n, 0);
  std::vector<bool> frozen(n, false);
  std::vector<long double> left = capacity;
  std::size_t unfrozen = n;
  while (unfrozen > 0) {
    std::vector<int> users(capacity.size(), 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (!frozen[i]) {
        for (int l : flows[i]->links) ++users[static_cast<std::size_t>(l)];
      }
    }
    long double level = std::numeric_limits<long double>::infinity();
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      if (users[l] > 0) level = std::min(level, left[l] / users[l]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!frozen[i] && flows[i]->cap_bytes_per_s > 0) {
        level = std::min(level, flows[i]->cap_bytes_per_s);
      }
    }
    // Freeze every flow held at `level`: by its cap, or by a link that level saturates.
    std::vector<bool> saturated(capacity.size(), false);
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      saturated[l] = users[l] > 0 && left[l] / users[l] <= level * (1 + 1e-15L);
    }
    std::vector<std::size_t> freeze;
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      bool held = flows[i]->cap_bytes_per_s > 0 && flows[i]->cap_bytes_per_s <= level;
      for (int l : flows[i]->links) held = held || saturated[static_cast<std::size_t>(l)];
      if (held) freeze.push_back(i);
    }
    for (std::size_t i : freeze) {
      frozen[i] = true;
      rate[i] = level;
      --unfrozen;
      for (int l : flows[i]->links) left[static_cast<std::size_t>(l)] -= level;
    }
  }
  return rate;
}

// Completion time (ps) of every flow, by flow index.
std::vector<Picoseconds> oracle_completions(const std::vector<long double>& capacity,
                                            const std::vector<OracleFlow>& flows) {
  std::vector<Picoseconds> done(flows.size(), -1);
  std::vector<long double> remaining(flows.size());
  std::vector<std::size_t> active;
  std::size_t next_start = 0;  // flows are sorted by start
  long double now = 0;
  while (next_start < flows.size() || !active.empty()) {
    while (next_start < flows.size() && flows[next_start].start_ps <= now) {
      remaining[next_start] = flows[next_start].bytes;
      active.push_back(next_start++);
    }
    std::vector<const OracleFlow*> view;
    for (std::size_t i : active) view.push_back(&flows[i]);
    const std::vector<long double> rate = max_min_rates(capacity, view);
    // The next event: a start, or the first whole picosecond at or after a flow's finish
    // (an exact finish within 1e-6 ps of a whole picosecond counts as that picosecond).
    long double next = next_start < flows.size()
                           ? static_cast<long double>(flows[next_start].start_ps)
                           : std::numeric_limits<long double>::infinity();
    std::vector<long double> finish(active.size());
    for (std::size_t k = 0; k < active.size(); ++k) {
      REQUIRE(rate[k] > 0);
      const long double exact = now + remaining[active[k]] * 1e12L / rate[k];
      finish[k] = std::max(now, std::ceil(exact - 1e-6L));
      next = std::min(next, finish[k]);
    }
    REQUIRE(std::isfinite(next));
    for (std::size_t k = 0; k < active.size(); ++k) {
      remaining[active[k]] -= rate[k] * (next - now) / 1e12L;
    }
    now = next;
    std::vector<std::size_t> still;
    for (std::size_t k = 0; k < active.size(); ++k) {
      if (finish[k] == next) {
        done[active[k]] = static_cast<Picoseconds>(next);
      } else {
        still.push_back(active[k]);
      }
    }
    active = still;
  }
  return done;
}

struct FlowSet {
  std::vector<double> capacity_bytes_per_s;
  std::vector<OracleFlow> flows;  // sorted by start
};

FlowSet random_flow_set(std::uint64_t seed, int links, int flows, Picoseconds spread_ps) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  FlowSet set;
  for (int l = 0; l < links; ++l) set.capacity_bytes_per_s.push_back(1e10 * pick(rng, 1, 40));
  for (int f = 0; f < flows; ++f) {
    OracleFlow flow;
    const int hops = pick(rng, 1, std::min(6, links / 2));
    while (static_cast<int>(flow.links.size()) < hops) {
      const int link = pick(rng, 0, links - 1);
      if (std::find(flow.links.begin(), flow.links.end(), link) == flow.links.end()) {
        flow.links.push_back(link);
      }
    }
    flow.bytes = std::round(std::pow(10.0, 3.0 + 6.0 * unit(rng)));  // 1 kB - 1 GB
    if (pick(rng, 0, 3) == 0) flow.cap_bytes_per_s = 1e9 * pick(rng, 5, 200);
    flow.start_ps = static_cast<Picoseconds>(unit(rng) * static_cast<double>(spread_ps));
    set.flows.push_back(flow);
  }
  std::stable_sort(set.flows.begin(), set.flows.end(),
                   [](const auto& a, const auto& b) { return a.start_ps < b.start_ps; });
  return set;
}

// FlowNetwork driven as the simulator drives it: at each event take the finished flows,
// start the due ones, settle.
std::vector<Picoseconds> network_completions(const FlowSet& set) {
  FlowNetwork net(set.capacity_bytes_per_s);
  std::vector<Picoseconds> done(set.flows.size(), -1);
  std::map<FlowId, std::size_t> index_of;
  std::size_t next = 0;
  while (true) {
    std::optional<Picoseconds> event = net.next_finish_ps();
    if (next < set.flows.size() && (!event || set.flows[next].start_ps < *event)) {
      event = set.flows[next].start_ps;
    }
    if (!event) break;
    const Picoseconds now = *event;
    for (FlowId id : net.take_finished(now)) done[index_of.at(id)] = now;
    while (next < set.flows.size() && set.flows[next].start_ps == now) {
      const OracleFlow& f = set.flows[next];
      const FlowId id = net.start(
          FlowSpec{f.links, static_cast<double>(f.bytes), static_cast<double>(f.cap_bytes_per_s)},
          now);
      index_of[id] = next++;
    }
    net.settle(now);
  }
  return done;
}

double worst_relative_error(const FlowSet& set) {
  std::vector<long double> capacity(set.capacity_bytes_per_s.begin(),
                                    set.capacity_bytes_per_s.end());
  const auto expected = oracle_completions(capacity, set.flows);
  const auto got = network_completions(set);
  double worst = 0.0;
  for (std::size_t i = 0; i < set.flows.size(); ++i) {
    REQUIRE(expected[i] > 0);
    REQUIRE(got[i] > 0);
    const double err =
        std::abs(static_cast<double>(got[i] - expected[i])) / static_cast<double>(expected[i]);
    INFO("flow " << i << " of " << set.flows[i].bytes << " B from " << set.flows[i].start_ps
                 << " ps: network " << got[i] << " ps, oracle " << expected[i] << " ps");
    CHECK(err <= 1e-6);
    worst = std::max(worst, err);
  }
  return worst;
}

}  // namespace

TEST_CASE("network differential: random flow sets match an exact max-min oracle") {
  // Dense: 200 links, 300 flows starting within 20 us, so most flows share links and the
  // rates change at nearly every event. Sparse: 400 links, starts over 2 ms.
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    INFO("dense seed " << seed);
    worst_relative_error(random_flow_set(seed, 200, 300, 20'000'000));
  }
  for (std::uint64_t seed : {21u, 22u, 23u}) {
    INFO("sparse seed " << seed);
    worst_relative_error(random_flow_set(seed, 400, 300, 2'000'000'000));
  }
}

TEST_CASE("network differential: collapses of many flows joining a nearly finished one") {
  // What all-to-alls produce: flows close to their end when hundreds join their links.
  // Routes over 4 links only, so every start changes the rates of almost every flow.
  for (std::uint64_t seed : {31u, 32u}) {
    INFO("seed " << seed);
    worst_relative_error(random_flow_set(seed, 4, 400, 50'000'000));
  }
}
