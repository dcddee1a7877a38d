// FlowNetwork against SimGrid on one generated flow set: the same max-min problem solved
// by both, wall time of each, and the largest difference of any completion time.
//
// The flow set: F flows over L links (capacities 10-400 GB/s), each on a random route of
// 1-6 distinct links, 1 KB-1 GB (log-uniform), starting at random times in [0, 1 ms), a
// quarter of them capped at a random rate below their bottleneck. Both models are pure
// max-min with per-flow caps: SimGrid's CM02 network model with latency 0, bandwidth and
// latency factors 1, weight-S 0, no cross traffic and no TCP window bound, so a
// communication's rate is its max-min share of the links on its route (LMM solver), as
// FlowNetwork computes it (sim/network/flow_network.hpp). Every flow gets its own host
// pair in a full zone with its route given explicitly, so routes are identical.
//
// Usage: flow_vs_simgrid [flows=10000] [links=2000] [seed=1]; FLOW_VS_SIMGRID_NO_CAPS=1 leaves
// out the caps, FLOW_VS_SIMGRID_DUMP=1 lists the flows, FLOW_VS_SIMGRID_ONLY_OURS=1 runs
// FlowNetwork alone (for instruction counts under callgrind, which are repeatable on a loaded
// host: it prints the times and a checksum of the completions). Prints one line per model
// (wall and CPU seconds: on a loaded host compare CPU) and the ratios; exit 1 if any
// completion differs by more than 1e-6 relative (beyond the 1 ps resolution of
// FlowNetwork's clock).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <random>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/network/flow_network.hpp"

namespace sg4 = simgrid::s4u;

namespace {

struct GeneratedFlow {
  std::vector<int> links;
  double bytes = 0.0;
  double cap_bytes_per_s = 0.0;  // 0 = none
  double start_s = 0.0;
};

struct FlowSet {
  std::vector<double> capacity_bytes_per_s;
  std::vector<GeneratedFlow> flows;  // sorted by start time
};

FlowSet generate(int flow_count, int link_count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  FlowSet set;
  for (int l = 0; l < link_count; ++l) {
    set.capacity_bytes_per_s.push_back(10e9 * std::pow(40.0, unit(rng)));  // 10-400 GB/s
  }
  for (int f = 0; f < flow_count; ++f) {
    GeneratedFlow flow;
    const int hops = 1 + static_cast<int>(rng() % 6);
    while (static_cast<int>(flow.links.size()) < hops) {
      const int l = static_cast<int>(rng() % static_cast<unsigned>(link_count));
      if (std::find(flow.links.begin(), flow.links.end(), l) == flow.links.end()) {
        flow.links.push_back(l);
      }
    }
    flow.bytes = std::round(1e3 * std::pow(1e6, unit(rng)));  // 1 KB - 1 GB
    flow.start_s = std::round(unit(rng) * 1e9) / 1e12;        // whole ps in [0, 1 ms)
    if (rng() % 4 == 0 && std::getenv("FLOW_VS_SIMGRID_NO_CAPS") == nullptr) {
      double bottleneck = 1e300;
      for (int l : flow.links) bottleneck = std::min(bottleneck, set.capacity_bytes_per_s[l]);
      flow.cap_bytes_per_s = bottleneck * (0.05 + 0.9 * unit(rng));
    }
    set.flows.push_back(std::move(flow));
  }
  std::stable_sort(
      set.flows.begin(), set.flows.end(),
      [](const GeneratedFlow& a, const GeneratedFlow& b) { return a.start_s < b.start_s; });
  return set;
}

// Completion time (s) of every flow under FlowNetwork: events are flow starts and finishes.
std::vector<double> run_flow_network(const FlowSet& set, std::int64_t& recomputed_flows) {
  tilesim::FlowNetwork net(set.capacity_bytes_per_s);
  std::vector<double> done(set.flows.size(), 0.0);
  std::vector<std::size_t> index_of;  // FlowId -> flow index (ids are dense from 0)
  std::size_t next = 0;
  tilesim::Picoseconds now = 0;
  while (next < set.flows.size() || net.active_flows() > 0) {
    const auto finish = net.next_finish_ps();
    const tilesim::Picoseconds start = next < set.flows.size()
                                           ? tilesim::s_to_ps(set.flows[next].start_s)
                                           : std::numeric_limits<tilesim::Picoseconds>::max();
    now = finish ? std::min(*finish, start) : start;
    for (tilesim::FlowId id : net.take_finished(now)) {
      done[index_of[static_cast<std::size_t>(id)]] = tilesim::ps_to_s(now);
    }
    while (next < set.flows.size() && tilesim::s_to_ps(set.flows[next].start_s) == now) {
      const GeneratedFlow& f = set.flows[next];
      const tilesim::FlowId id = net.start({f.links, f.bytes, f.cap_bytes_per_s}, now);
      if (static_cast<std::size_t>(id) >= index_of.size()) index_of.resize(id + 1);
      index_of[static_cast<std::size_t>(id)] = next++;
    }
    net.settle(now);
  }
  recomputed_flows = net.recomputed_flows();
  return done;
}

// Completion time (s) of every flow under SimGrid (one actor per flow).
std::vector<double> run_simgrid(const FlowSet& set, int argc, char** argv) {
  sg4::Engine engine(&argc, argv);
  for (const char* option :
       {"network/model:CM02", "network/latency-factor:1", "network/bandwidth-factor:1",
        "network/weight-S:0", "network/crosstraffic:0", "network/TCP-gamma:0",
        "maxmin/precision:1e-12", "surf/precision:1e-13"}) {
    engine.set_config(option);
  }
  sg4::NetZone* zone = sg4::create_full_zone("flows");
  std::vector<sg4::Link*> links;
  for (std::size_t l = 0; l < set.capacity_bytes_per_s.size(); ++l) {
    links.push_back(zone->create_link(fmt::format("l{}", l), set.capacity_bytes_per_s[l])
                        ->set_latency(0)
                        ->seal());
  }
  std::vector<sg4::Host*> src, dst;
  for (std::size_t f = 0; f < set.flows.size(); ++f) {
    src.push_back(zone->create_host(fmt::format("s{}", f), 1e9)->seal());
    dst.push_back(zone->create_host(fmt::format("d{}", f), 1e9)->seal());
    std::vector<sg4::LinkInRoute> route;
    for (int l : set.flows[f].links) route.emplace_back(links[static_cast<std::size_t>(l)]);
    // Comm::set_rate is not applied to host-to-host communications (measured: a capped flow
    // ran at its bottleneck share); a private link of the cap's capacity bounds the flow's
    // max-min rate exactly as a cap does.
    if (set.flows[f].cap_bytes_per_s > 0) {
      route.emplace_back(zone->create_link(fmt::format("cap{}", f), set.flows[f].cap_bytes_per_s)
                             ->set_latency(0)
                             ->seal());
    }
    zone->add_route(src.back()->get_netpoint(), dst.back()->get_netpoint(), nullptr, nullptr, route,
                    false);
  }
  zone->seal();
  std::vector<double> done(set.flows.size(), 0.0);
  for (std::size_t f = 0; f < set.flows.size(); ++f) {
    sg4::Actor::create(fmt::format("a{}", f), src[f], [&set, &done, &src, &dst, f] {
      const GeneratedFlow& flow = set.flows[f];
      sg4::this_actor::sleep_until(flow.start_s);
      sg4::CommPtr comm = sg4::Comm::sendto_init();
      comm->set_payload_size(static_cast<std::uint64_t>(flow.bytes));
      comm->set_source(src[f])->set_destination(dst[f]);
      comm->wait();
      done[f] = sg4::Engine::get_clock();
    });
  }
  engine.run();
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  const int flows = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int link_count = argc > 2 ? std::atoi(argv[2]) : 2000;
  const unsigned seed = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1U;
  if (flows < 1 || link_count < 6) {
    fmt::print(stderr, "usage: flow_vs_simgrid [flows >= 1] [links >= 6] [seed]\n");
    return 2;
  }
  const FlowSet set = generate(flows, link_count, seed);
  if (std::getenv("FLOW_VS_SIMGRID_DUMP") != nullptr) {
    for (const GeneratedFlow& f : set.flows) {
      fmt::print("flow start {} bytes {} cap {} links", f.start_s, f.bytes, f.cap_bytes_per_s);
      for (int l : f.links) fmt::print(" {}({:.4g})", l, set.capacity_bytes_per_s[l]);
      fmt::print("\n");
    }
  }
  using Clock = std::chrono::steady_clock;
  // CPU seconds of this process (both models run on this thread): on a loaded host
  // their ratio is far steadier than the wall-clock one.
  const auto cpu_s = [] { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; };
  auto t0 = Clock::now();
  double c0 = cpu_s();
  std::int64_t recomputed_flows = 0;
  const std::vector<double> ours = run_flow_network(set, recomputed_flows);
  const double ours_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double ours_cpu_s = cpu_s() - c0;
  if (std::getenv("FLOW_VS_SIMGRID_ONLY_OURS") != nullptr) {
    double sum_s = 0.0;
    for (double t : ours) sum_s += t;
    fmt::print(
        "flows {}  links {}  seed {}\nFlowNetwork  {:9.3f} s  ({:.3f} s CPU; sum of completions "
        "{:.17g} s, {} flow rates recomputed)\n",
        flows, link_count, seed, ours_s, ours_cpu_s, sum_s, recomputed_flows);
    return 0;
  }
  std::string log_option = "--log=root.thresh:critical";  // no configuration banners
  int sg_argc = 2;
  char* sg_argv[] = {argv[0], log_option.data(), nullptr};
  t0 = Clock::now();
  c0 = cpu_s();
  const std::vector<double> theirs = run_simgrid(set, sg_argc, sg_argv);
  const double theirs_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double theirs_cpu_s = cpu_s() - c0;
  double worst = 0.0;
  std::size_t worst_flow = 0;
  for (std::size_t f = 0; f < ours.size(); ++f) {
    // FlowNetwork rounds finishes up to whole picoseconds: 1 ps is its resolution.
    const double rel = std::max(0.0, std::abs(ours[f] - theirs[f]) - 1e-12) / theirs[f];
    if (rel > worst) {
      worst = rel;
      worst_flow = f;
    }
  }
  fmt::print("flows {}  links {}  seed {}\n", flows, link_count, seed);
  fmt::print("FlowNetwork  {:9.3f} s  ({:.3f} s CPU)\nSimGrid 3.32 {:9.3f} s  ({:.3f} s CPU)\n",
             ours_s, ours_cpu_s, theirs_s, theirs_cpu_s);
  fmt::print("ratio (SimGrid / FlowNetwork) {:.2f} wall, {:.2f} CPU\n", theirs_s / ours_s,
             theirs_cpu_s / ours_cpu_s);
  fmt::print("largest completion difference {:.3g} (flow {}: {:.12g} s vs {:.12g} s)\n", worst,
             worst_flow, ours[worst_flow], theirs[worst_flow]);
  return worst <= 1e-6 ? 0 : 1;
}
