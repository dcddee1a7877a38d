// The incremental FlowNetwork against a reference that recomputes every active
// flow at every change (same allocation and re-anchoring rules, no components,
// no dirty tracking, no finish queue): finish times and rates must be identical.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "sim/network/flow_network.hpp"
#include "sim/network/max_min_fair.hpp"
#include "tests/random_pick.hpp"

using namespace tilesim;
using tilesim::test::pick;

namespace {

class ReferenceNetwork {
 public:
  explicit ReferenceNetwork(std::vector<double> capacity) : capacity_(std::move(capacity)) {}

  FlowId start(const FlowSpec& spec, Picoseconds now) {
    Flow flow;
    flow.spec = spec;
    flow.remaining_bytes = spec.bytes;
    flow.anchor_ps = now;
    flows_.emplace(next_id_, flow);
    return next_id_++;
  }

  void settle(Picoseconds now) {
    std::vector<FlowId> solved;
    for (auto& [id, flow] : flows_) {
      if (flow.settled && flow.finish_ps <= now) {
        flow.rate_bytes_per_s = 0.0;
      } else {
        solved.push_back(id);
      }
    }
    std::vector<double> rates;
    for (bool guard_fired = true; guard_fired;) {
      FairShareProblem problem;
      for (FlowId id : solved) {
        problem.add_flow(flows_[id].spec.links, flows_[id].spec.rate_cap_bytes_per_s);
      }
      rates = max_min_fair_rates(capacity_, problem);
      recomputed_ += static_cast<std::int64_t>(solved.size());
      guard_fired = false;
      std::vector<FlowId> kept_ids;
      std::vector<double> kept_rates;
      for (std::size_t i = 0; i < solved.size(); ++i) {
        Flow& flow = flows_[solved[i]];
        if (rates[i] != flow.rate_bytes_per_s && !std::isinf(rates[i])) {
          const double left = remaining(flow, now);
          if (left * 1e12 < rates[i]) {  // would finish within this picosecond
            flow.rate_bytes_per_s = 0.0;
            flow.settled = true;
            flow.finish_ps = now;
            guard_fired = true;
            continue;
          }
        }
        kept_ids.push_back(solved[i]);
        kept_rates.push_back(rates[i]);
      }
      solved = kept_ids;
      rates = kept_rates;
    }
    for (std::size_t i = 0; i < solved.size(); ++i) {
      Flow& flow = flows_[solved[i]];
      if (rates[i] == flow.rate_bytes_per_s && flow.settled) continue;
      flow.settled = true;
      if (std::isinf(rates[i])) {
        flow.rate_bytes_per_s = rates[i];
        flow.finish_ps = flow.anchor_ps;
        continue;
      }
      flow.remaining_bytes = remaining(flow, now);
      flow.anchor_ps = now;
      flow.rate_bytes_per_s = rates[i];
      flow.finish_ps =
          now + static_cast<Picoseconds>(std::ceil(flow.remaining_bytes * 1e12 / rates[i]));
    }
  }

  std::vector<FlowId> take_finished(Picoseconds now) {
    std::vector<FlowId> done;
    for (auto it = flows_.begin(); it != flows_.end();) {
      if (it->second.settled && it->second.finish_ps <= now) {
        done.push_back(it->first);
        it = flows_.erase(it);
      } else {
        ++it;
      }
    }
    return done;
  }

  std::optional<Picoseconds> next_finish_ps() const {
    std::optional<Picoseconds> best;
    for (const auto& [id, flow] : flows_) {
      if (flow.settled && (!best || flow.finish_ps < *best)) best = flow.finish_ps;
    }
    return best;
  }

  // (id, rate, links) of every active flow, in id order.
  std::vector<std::tuple<FlowId, double, std::vector<int>>> active() const {
    std::vector<std::tuple<FlowId, double, std::vector<int>>> out;
    for (const auto& [id, flow] : flows_)
      out.emplace_back(id, flow.rate_bytes_per_s, flow.spec.links);
    return out;
  }
  std::int64_t recomputed() const { return recomputed_; }

 private:
  struct Flow {
    FlowSpec spec;
    double remaining_bytes = 0.0;
    double rate_bytes_per_s = 0.0;
    Picoseconds anchor_ps = 0;
    Picoseconds finish_ps = 0;
    bool settled = false;
  };
  static double remaining(const Flow& flow, Picoseconds now) {
    if (!(flow.rate_bytes_per_s > 0.0) || std::isinf(flow.rate_bytes_per_s)) {
      return flow.remaining_bytes;
    }
    return flow.remaining_bytes -
           flow.rate_bytes_per_s * static_cast<double>(now - flow.anchor_ps) / 1e12;
  }

  std::vector<double> capacity_;
  std::map<FlowId, Flow> flows_;
  FlowId next_id_ = 0;
  std::int64_t recomputed_ = 0;
};

struct Scenario {
  std::vector<double> capacity;
  std::vector<std::pair<Picoseconds, FlowSpec>> starts;  // sorted by time
};

// 300 flows. Dense: 24 links, routes of 1-3 links, starts within 20 us, so most
// flows overlap in one big component. Sparse: 64 links, routes of 1-2 links,
// starts spread over 2 ms, flows of at most 200 kB: components stay small.
Scenario random_scenario(std::uint64_t seed, bool sparse) {
  std::mt19937_64 rng(seed);
  Scenario s;
  const int links = sparse ? 64 : 24;
  for (int l = 0; l < links; ++l) s.capacity.push_back(1e8 * pick(rng, 10, 100) + 0.37e8);
  for (int f = 0; f < 300; ++f) {
    if (f > 0 && pick(rng, 0, 7) == 0) {  // a twin: same start and spec, same finish
      s.starts.push_back(s.starts.back());
      continue;
    }
    FlowSpec spec;
    const int hops = pick(rng, 0, 9) == 0 ? 0 : pick(rng, 1, sparse ? 2 : 3);
    while (static_cast<int>(spec.links.size()) < hops) {
      const int link = pick(rng, 0, links - 1);
      if (std::find(spec.links.begin(), spec.links.end(), link) == spec.links.end()) {
        spec.links.push_back(link);
      }
    }
    spec.bytes = 1e3 * pick(rng, 1, sparse ? 200 : 10'000) + 0.25 * pick(rng, 0, 3);
    if (pick(rng, 0, 3) == 0 || (hops == 0 && pick(rng, 0, 1) == 0)) {
      spec.rate_cap_bytes_per_s = (sparse ? 1e9 : 1e8) * pick(rng, 1, 50);
    }
    // Multiples of 1 ns (dense) or 100 ns (sparse): some flows start together.
    const Picoseconds start_ps =
        sparse ? 100'000 * pick(rng, 0, 20'000) : 1000 * pick(rng, 0, 20'000);
    s.starts.emplace_back(start_ps, spec);
  }
  std::stable_sort(s.starts.begin(), s.starts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return s;
}

// Runs the scenario: at each event time take the finished flows, start the
// due flows, settle. Returns (time, finished ids) per event; after every settle
// calls check().
template <typename Network, typename Check>
std::vector<std::pair<Picoseconds, std::vector<FlowId>>> run(Network& net, const Scenario& s,
                                                             Check check) {
  std::vector<std::pair<Picoseconds, std::vector<FlowId>>> log;
  std::size_t next = 0;
  while (true) {
    std::optional<Picoseconds> event = net.next_finish_ps();
    if (next < s.starts.size() && (!event || s.starts[next].first < *event)) {
      event = s.starts[next].first;
    }
    if (!event) break;
    const Picoseconds now = *event;
    auto done = net.take_finished(now);
    if (!done.empty()) log.emplace_back(now, done);
    while (next < s.starts.size() && s.starts[next].first == now) {
      net.start(s.starts[next].second, now);
      ++next;
    }
    net.settle(now);
    check(now);
  }
  return log;
}

}  // namespace

TEST_CASE("network: incremental settles match a full recompute at every change") {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    const bool sparse = seed > 3;
    const Scenario s = random_scenario(seed, sparse);
    FlowNetwork net(s.capacity);
    ReferenceNetwork ref(s.capacity);
    const auto ref_log = run(ref, s, [](Picoseconds) {});
    std::size_t checks = 0;
    // Replay: after each settle the incremental rates equal the reference's,
    // and link loads equal the sum (in id order) of the rates on the link.
    ReferenceNetwork shadow(s.capacity);
    std::size_t shadow_next = 0;
    std::vector<std::pair<Picoseconds, std::vector<FlowId>>> shadow_log;
    const auto log = run(net, s, [&](Picoseconds now) {
      auto done = shadow.take_finished(now);
      if (!done.empty()) shadow_log.emplace_back(now, done);
      while (shadow_next < s.starts.size() && s.starts[shadow_next].first == now) {
        shadow.start(s.starts[shadow_next].second, now);
        ++shadow_next;
      }
      shadow.settle(now);
      std::vector<double> load(s.capacity.size(), 0.0);
      const auto active = shadow.active();
      REQUIRE(active.size() == net.active_flows());
      for (const auto& [id, rate, links] : active) {
        REQUIRE(net.rate_bytes_per_s(id) == rate);
        for (int link : links) load[link] += rate;
      }
      for (std::size_t l = 0; l < load.size(); ++l) {
        REQUIRE(net.link_load_bytes_per_s(static_cast<int>(l)) == load[l]);
        REQUIRE(load[l] <= s.capacity[l] * (1 + 1e-12));
      }
      ++checks;
    });
    CHECK(log == ref_log);
    CHECK(shadow_log == ref_log);
    std::size_t finished = 0;
    for (const auto& entry : log) finished += entry.second.size();
    CHECK(finished == s.starts.size());
    // Some events finish several flows at once (same start, same size or rate).
    CHECK(std::any_of(log.begin(), log.end(),
                      [](const auto& entry) { return entry.second.size() > 1; }));
    CHECK(checks > 300);
    // With small components the incremental network recomputes far fewer flows.
    CHECK(net.recomputed_flows() <= ref.recomputed());
    if (sparse) CHECK(net.recomputed_flows() * 4 < ref.recomputed());
  }
}

TEST_CASE("network: same inputs give identical finish times") {
  const Scenario s = random_scenario(42, false);
  FlowNetwork first(s.capacity);
  FlowNetwork second(s.capacity);
  const auto a = run(first, s, [](Picoseconds) {});
  const auto b = run(second, s, [](Picoseconds) {});
  CHECK(a == b);
  CHECK(first.recomputed_flows() == second.recomputed_flows());
}
