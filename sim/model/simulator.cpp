#include "sim/model/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "sim/core/input_error.hpp"
#include "sim/model/compute_model.hpp"
#include "sim/model/event_queue.hpp"
#include "sim/model/exposed_comm.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/plan/plan_tracker.hpp"

namespace tilesim {
namespace {

enum class EventKind : std::uint8_t { compute_done, flow_start, transfer_done };

struct EventPayload {
  EventKind kind;
  std::int32_t rank;      // compute_done
  std::int64_t index;     // op index or transfer index
  std::uint32_t version;  // compute_done: stale when the compute was rescheduled
};

// The compute running on a rank's stream. Its remaining work is kept in
// unslowed picoseconds; it progresses at 1 / stretch, where stretch =
// (1 + comm_slowdown while a transfer touches the GPU) x (k / cores while k >
// cores computes share the node's cores), and its completion is rescheduled
// whenever the stretch changes.
struct RunningCompute {
  int index = -1;
  double remaining_ps = 0.0;
  Picoseconds since_ps = 0;
  double stretch = 1.0;
  std::uint32_t version = 0;
};

// Ranking of link classes for "the slowest class on a route" (alpha).
int class_rank(LinkClass cls) {
  switch (cls) {
    case LinkClass::nvlink:
      return 0;
    case LinkClass::pcie:
      return 1;
    case LinkClass::upi:
      return 2;
    case LinkClass::ethernet:
      return 3;
    case LinkClass::ib:
      return 4;
  }
  return 0;
}

class Simulation {
 public:
  Simulation(const Plan& plan, const Topology& topology, const CalibrationProfile& profile,
             const SimulationOptions& options)
      : plan_(plan),
        topology_(topology),
        profile_(profile),
        options_(options),
        compute_(plan, profile),
        tracker_(plan),
        router_(topology),
        network_(link_capacities()) {
    placement_ = options.placement.empty() ? plan.placement : options.placement;
    if (placement_.empty()) {
      for (int r = 0; r < plan.ranks; ++r) placement_.push_back(r);
    }
    if (static_cast<int>(placement_.size()) != plan.ranks) {
      throw std::invalid_argument("placement does not name a GPU for every rank");
    }
    for (int gpu : placement_) {
      if (gpu < 0 || gpu >= topology.gpu_count()) {
        throw std::invalid_argument(
            fmt::format("placement names GPU {}, the topology has {}", gpu, topology.gpu_count()));
      }
    }
    result_.ranks.resize(static_cast<std::size_t>(plan.ranks));
    result_.ops.resize(static_cast<std::size_t>(plan.ranks));
    for (int r = 0; r < plan.ranks; ++r) {
      result_.ops[static_cast<std::size_t>(r)].resize(
          plan.programs[static_cast<std::size_t>(r)].size());
    }
    active_transfers_.assign(static_cast<std::size_t>(plan.ranks), 0);
    running_.assign(static_cast<std::size_t>(plan.ranks), RunningCompute{});
    active_since_.assign(static_cast<std::size_t>(plan.ranks), 0);
    for (int gpu : placement_) rank_node_.push_back(std::max(topology.node_of_gpu(gpu), 0));
    const int nodes =
        rank_node_.empty() ? 1 : *std::max_element(rank_node_.begin(), rank_node_.end()) + 1;
    running_on_node_.assign(static_cast<std::size_t>(nodes), 0);
  }

  SimulationResult run() {
    const auto wall_start = std::chrono::steady_clock::now();
    Picoseconds now = 0;
    std::vector<OpId> computes;
    std::vector<Transfer> transfers;
    while (true) {
      computes.clear();
      transfers.clear();
      tracker_.poll(computes, transfers);
      // Transfers first: a compute that starts with them overlaps them.
      for (const Transfer& t : transfers) post_transfer(t, now);
      for (OpId id : computes) start_compute(id, now);
      network_.settle(now);
      if (options_.record_link_samples) sample_links(now);

      const auto net_next = network_.next_finish_ps();
      if (queue_.empty() && !net_next) break;
      Picoseconds next = queue_.empty() ? *net_next : queue_.next_time_ps();
      if (net_next && *net_next < next) next = *net_next;
      now = next;
      if (net_next && *net_next == now) {
        for (FlowId flow : network_.take_finished(now)) finish_flow(flow, now);
      }
      while (!queue_.empty() && queue_.next_time_ps() == now) handle(queue_.pop().payload, now);
    }
    if (!tracker_.all_done()) {
      const auto blocked = tracker_.first_blocked(1);
      throw PlanError(blocked.front(),
                      fmt::format("simulation stalled at {}", plan_.describe(blocked.front())));
    }
    finalize();
    result_.events = queue_.scheduled();
    result_.sim_wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return std::move(result_);
  }

 private:
  std::vector<double> link_capacities() const {
    std::vector<double> caps(static_cast<std::size_t>(topology_.link_count()));
    for (int l = 0; l < topology_.link_count(); ++l) {
      const Link& link = topology_.link(l);
      const LinkCost& cost = profile_.link(link.cls);
      if (!cost.defined) {
        throw InputError(profile_.source, 0, fmt::format("links.{}", to_string(link.cls)),
                         fmt::format("costs for link class {} (efficiency, alpha, flow_cap): "
                                     "topology '{}' has such links",
                                     to_string(link.cls), topology_.name));
      }
      caps[static_cast<std::size_t>(l)] = link.bandwidth_bytes_per_s * cost.efficiency;
    }
    return caps;
  }

  double slow_factor(bool slowed) const { return slowed ? 1.0 + profile_.comm_slowdown : 1.0; }

  // Fair sharing of a node's cores: k > cores running computes each get cores / k.
  double share_stretch(int rank) const {
    const int node = rank_node_[static_cast<std::size_t>(rank)];
    const int k = running_on_node_[static_cast<std::size_t>(node)];
    const double cores = profile_.compute_cores;
    return cores > 0.0 && k > cores ? static_cast<double>(k) / cores : 1.0;
  }

  double stretch_of(int rank) const {
    return slow_factor(active_transfers_[static_cast<std::size_t>(rank)] > 0) * share_stretch(rank);
  }

  // Re-rates a running compute whose stretch may have changed.
  void restretch(int rank, Picoseconds now) {
    RunningCompute& run = running_[static_cast<std::size_t>(rank)];
    if (run.index < 0) return;
    const double stretch = stretch_of(rank);
    if (stretch == run.stretch) return;
    run.remaining_ps -= static_cast<double>(now - run.since_ps) / run.stretch;
    run.remaining_ps = std::max(run.remaining_ps, 0.0);
    run.since_ps = now;
    run.stretch = stretch;
    schedule_completion(rank, now);
  }

  // A compute started or ended on `rank`'s node: re-rate the node's others.
  void node_load_changed(int rank, int delta, Picoseconds now) {
    const int node = rank_node_[static_cast<std::size_t>(rank)];
    running_on_node_[static_cast<std::size_t>(node)] += delta;
    if (profile_.compute_cores <= 0.0) return;
    for (int r = 0; r < plan_.ranks; ++r) {
      if (r != rank && rank_node_[static_cast<std::size_t>(r)] == node) restretch(r, now);
    }
  }

  void schedule_completion(int rank, Picoseconds now) {
    RunningCompute& run = running_[static_cast<std::size_t>(rank)];
    ++run.version;
    queue_.push(later_ps(now, run.remaining_ps * run.stretch - 1e-6),
                {EventKind::compute_done, rank, run.index, run.version});
  }

  void start_compute(OpId id, Picoseconds now) {
    const RankProgram& program = plan_.programs[static_cast<std::size_t>(id.rank)];
    RunningCompute& run = running_[static_cast<std::size_t>(id.rank)];
    run.index = id.index;
    run.remaining_ps = static_cast<double>(compute_.duration_ps(program, id.index));
    run.since_ps = now;
    node_load_changed(id.rank, +1, now);
    run.stretch = stretch_of(id.rank);
    result_.ops[static_cast<std::size_t>(id.rank)][static_cast<std::size_t>(id.index)].start_ps =
        now;
    result_.ranks[static_cast<std::size_t>(id.rank)].compute_flops += plan_.compute_flops(id);
    schedule_completion(id.rank, now);
  }

  void finish_compute(const EventPayload& e, Picoseconds now) {
    RunningCompute& run = running_[static_cast<std::size_t>(e.rank)];
    if (e.version != run.version || run.index != e.index) return;  // rescheduled
    auto& timing = result_.ops[static_cast<std::size_t>(e.rank)][static_cast<std::size_t>(e.index)];
    timing.end_ps = now;
    result_.ranks[static_cast<std::size_t>(e.rank)].compute_busy_ps += now - timing.start_ps;
    run.index = -1;
    node_load_changed(e.rank, -1, now);
    tracker_.finish({e.rank, static_cast<int>(e.index)});
  }

  void transfer_touches(int rank, int delta, Picoseconds now) {
    auto& count = active_transfers_[static_cast<std::size_t>(rank)];
    const bool was_active = count > 0;
    if (count == 0 && delta > 0) active_since_[static_cast<std::size_t>(rank)] = now;
    count += delta;
    if (count == 0) {
      result_.ranks[static_cast<std::size_t>(rank)].comm_active_ps +=
          now - active_since_[static_cast<std::size_t>(rank)];
    }
    if (was_active == (count > 0) || profile_.comm_slowdown <= 0) return;
    restretch(rank, now);
  }

  void post_transfer(const Transfer& t, Picoseconds now) {
    TransferRecord rec;
    rec.send = t.send;
    rec.recv = t.recv;
    rec.object = t.object;
    rec.bytes = plan_.object(t.object).bytes;
    rec.posted_ps = now;
    const auto index = static_cast<std::int64_t>(result_.transfers.size());
    result_.transfers.push_back(rec);
    transfer_touches(t.send.rank, +1, now);
    transfer_touches(t.recv.rank, +1, now);
    const Route& route = router_.route(placement_[static_cast<std::size_t>(t.send.rank)],
                                       placement_[static_cast<std::size_t>(t.recv.rank)]);
    LinkClass slowest = LinkClass::nvlink;
    for (LinkId l : route.links) {
      if (class_rank(topology_.link(l).cls) > class_rank(slowest)) slowest = topology_.link(l).cls;
    }
    const Picoseconds alpha = s_to_ps(profile_.link(slowest).alpha_s);
    queue_.push(later_ps(now, alpha), {EventKind::flow_start, 0, index, 0});
  }

  void start_flow(std::int64_t index, Picoseconds now) {
    const TransferRecord& rec = result_.transfers[static_cast<std::size_t>(index)];
    const Route& route = router_.route(placement_[static_cast<std::size_t>(rec.send.rank)],
                                       placement_[static_cast<std::size_t>(rec.recv.rank)]);
    FlowSpec spec;
    spec.links.assign(route.links.begin(), route.links.end());
    spec.bytes = rec.bytes;
    double cap = 0.0;
    for (LinkId l : route.links) {
      const double c = profile_.link(topology_.link(l).cls).flow_cap_bytes_per_s;
      if (c > 0 && (cap == 0.0 || c < cap)) cap = c;
    }
    spec.rate_cap_bytes_per_s = cap;
    if (spec.bytes <= 0.0) {
      queue_.push(later_ps(now, route.latency_ps), {EventKind::transfer_done, 0, index, 0});
      return;
    }
    if (options_.record_link_samples) {
      for (LinkId l : route.links) touched_links_.push_back(l);
    }
    const FlowId flow = network_.start(std::move(spec), now);
    flow_to_transfer_[flow] = index;
  }

  void finish_flow(FlowId flow, Picoseconds now) {
    auto it = flow_to_transfer_.find(flow);
    const std::int64_t index = it->second;
    flow_to_transfer_.erase(it);
    const TransferRecord& rec = result_.transfers[static_cast<std::size_t>(index)];
    const Route& route = router_.route(placement_[static_cast<std::size_t>(rec.send.rank)],
                                       placement_[static_cast<std::size_t>(rec.recv.rank)]);
    if (options_.record_link_samples) {
      for (LinkId l : route.links) touched_links_.push_back(l);
    }
    queue_.push(later_ps(now, route.latency_ps), {EventKind::transfer_done, 0, index, 0});
  }

  void handle(const EventPayload& e, Picoseconds now) {
    switch (e.kind) {
      case EventKind::compute_done:
        finish_compute(e, now);
        break;
      case EventKind::flow_start:
        start_flow(e.index, now);
        break;
      case EventKind::transfer_done: {
        TransferRecord& rec = result_.transfers[static_cast<std::size_t>(e.index)];
        rec.end_ps = now;
        for (OpId id : {rec.send, rec.recv}) {
          auto& timing =
              result_.ops[static_cast<std::size_t>(id.rank)][static_cast<std::size_t>(id.index)];
          timing.start_ps = rec.posted_ps;
          timing.end_ps = now;
        }
        result_.ranks[static_cast<std::size_t>(rec.send.rank)].bytes_sent += rec.bytes;
        result_.ranks[static_cast<std::size_t>(rec.recv.rank)].bytes_received += rec.bytes;
        transfer_touches(rec.send.rank, -1, now);
        transfer_touches(rec.recv.rank, -1, now);
        tracker_.finish_transfer({rec.send, rec.recv, rec.object});
        break;
      }
    }
  }

  void sample_links(Picoseconds now) {
    std::sort(touched_links_.begin(), touched_links_.end());
    touched_links_.erase(std::unique(touched_links_.begin(), touched_links_.end()),
                         touched_links_.end());
    // A rate change can ripple through every flow that shares a link with a
    // touched one, so sample the links of all active flows plus the touched.
    for (const auto& [flow, index] : flow_to_transfer_) {
      (void)flow;
      const TransferRecord& rec = result_.transfers[static_cast<std::size_t>(index)];
      const Route& route = router_.route(placement_[static_cast<std::size_t>(rec.send.rank)],
                                         placement_[static_cast<std::size_t>(rec.recv.rank)]);
      touched_links_.insert(touched_links_.end(), route.links.begin(), route.links.end());
    }
    std::sort(touched_links_.begin(), touched_links_.end());
    touched_links_.erase(std::unique(touched_links_.begin(), touched_links_.end()),
                         touched_links_.end());
    for (int l : touched_links_) {
      const double load = network_.link_load_bytes_per_s(l);
      auto [it, inserted] = last_link_load_.emplace(l, load);
      if (!inserted && it->second == load) continue;
      it->second = load;
      result_.link_samples.push_back({now, l, load});
    }
    touched_links_.clear();
  }

  void finalize() {
    for (int r = 0; r < plan_.ranks; ++r) {
      auto& totals = result_.ranks[static_cast<std::size_t>(r)];
      for (const OpTiming& t : result_.ops[static_cast<std::size_t>(r)]) {
        totals.end_ps = std::max(totals.end_ps, t.end_ps);
      }
      totals.peak_bytes = tracker_.peak_bytes(r);
      totals.peak_breakdown = tracker_.peak_breakdown(r);
      result_.makespan_ps = std::max(result_.makespan_ps, totals.end_ps);
    }
    result_.single_gpu_s = compute_.single_gpu_time_s();
    result_.warnings = compute_.warnings();
    fill_exposed_comm(plan_, result_);
  }

  const Plan& plan_;
  const Topology& topology_;
  const CalibrationProfile& profile_;
  const SimulationOptions& options_;
  ComputeModel compute_;
  PlanTracker tracker_;
  Router router_;
  FlowNetwork network_;
  EventQueue<EventPayload> queue_;
  std::vector<int> placement_;
  std::vector<int> active_transfers_;
  std::vector<RunningCompute> running_;
  std::vector<Picoseconds> active_since_;
  std::vector<int> rank_node_;        // topology node of each rank's GPU
  std::vector<int> running_on_node_;  // computes running per node (core sharing)
  std::unordered_map<FlowId, std::int64_t> flow_to_transfer_;
  std::vector<int> touched_links_;
  std::map<int, double> last_link_load_;
  SimulationResult result_;
};

}  // namespace

SimulationResult simulate(const Plan& plan, const Topology& topology,
                          const CalibrationProfile& profile, const SimulationOptions& options) {
  return Simulation(plan, topology, profile, options).run();
}

}  // namespace tilesim
