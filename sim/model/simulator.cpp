#include "sim/model/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/model/collective_lanes.hpp"
#include "sim/model/comm_activity.hpp"
#include "sim/model/compute_model.hpp"
#include "sim/model/compute_stretch.hpp"
#include "sim/model/event_queue.hpp"
#include "sim/model/flow_transfer_model.hpp"
#include "sim/model/link_sampler.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/plan/plan_tracker.hpp"
#include "sim/plan/windowed_tracker.hpp"

namespace tilesim {
namespace {

enum class EventKind : std::uint8_t { compute_done, transfer_wake };

struct EventPayload {
  EventKind kind;
  std::int32_t rank;      // compute_done
  std::int64_t index;     // compute_done: op index; transfer_wake: the model's token
  std::uint32_t version;  // compute_done: stale when the compute was rescheduled
};

// The compute running on a rank's stream. Its remaining work is kept in
// unslowed picoseconds; it progresses at 1 / stretch (compute_stretch.hpp), and
// its completion is rescheduled whenever the stretch changes.
struct RunningCompute {
  int index = -1;
  Picoseconds start_ps = 0;
  double remaining_ps = 0.0;
  Picoseconds since_ps = 0;
  double stretch = 1.0;
  std::uint32_t version = 0;
};

// What a rank's exposed communication is made of (exposed_comm.hpp), kept as
// its ops run instead of read back from per-op times: the compute stream runs
// in program order, so the gap before each compute-stream op is known when it
// starts.
struct RankStream {
  Picoseconds stream_free_ps = 0;     // the last compute-stream op ended
  Picoseconds gaps_ps = 0;            // idle gaps before compute-stream ops
  Picoseconds output_arrived_ps = 0;  // the last final output received by its owner
};

std::vector<int> placement_of(const Plan& plan, const Topology& topology,
                              const SimulationOptions& options, const RingSymmetry* symmetry) {
  if (symmetry != nullptr) {
    if (symmetry->classes != plan.ranks || !symmetry->exact()) {
      throw std::invalid_argument("a quotient plan needs the exact symmetry of its classes");
    }
    return {symmetry->full_placement.begin(), symmetry->full_placement.begin() + plan.ranks};
  }
  std::vector<int> placement = options.placement.empty() ? plan.placement : options.placement;
  if (placement.empty()) {
    for (int r = 0; r < plan.ranks; ++r) placement.push_back(r);
  }
  if (static_cast<int>(placement.size()) != plan.ranks) {
    throw std::invalid_argument("placement does not name a GPU for every rank");
  }
  for (int gpu : placement) {
    if (gpu < 0 || gpu >= topology.gpu_count()) {
      throw std::invalid_argument(
          fmt::format("placement names GPU {}, the topology has {}", gpu, topology.gpu_count()));
    }
  }
  return placement;
}

std::vector<int> nodes_of(const std::vector<int>& placement, const Topology& topology) {
  std::vector<int> nodes;
  nodes.reserve(placement.size());
  for (int gpu : placement) nodes.push_back(std::max(topology.node_of_gpu(gpu), 0));
  return nodes;
}

// Tracker: PlanTracker over a whole plan, or WindowedTracker over programs generated as they
// run (the same hand-outs in the same order, windowed_tracker.hpp).
template <class Tracker>
class Simulation final : private TransferCalendar {
 public:
  Simulation(const Plan& plan, Tracker&& tracker, const Topology& topology,
             const CalibrationProfile& profile, const SimulationOptions& options,
             const RingSymmetry* symmetry = nullptr)
      : plan_(plan),
        options_(options),
        symmetry_(symmetry),
        compute_(plan, profile),
        tracker_(std::move(tracker)),
        network_(make_network(topology, profile, options)),
        placement_(placement_of(plan, topology, options, symmetry)),
        stretch_(nodes_of(placement_, topology), profile.comm_slowdown, profile.compute_cores),
        activity_(plan.ranks) {
    result_.ranks.resize(static_cast<std::size_t>(plan.ranks));
    streams_.resize(static_cast<std::size_t>(plan.ranks));
    if (options.record_ops) {
      result_.ops.resize(static_cast<std::size_t>(plan.ranks));
      for (int r = 0; r < plan.ranks; ++r) {
        result_.ops[static_cast<std::size_t>(r)].resize(
            plan.programs[static_cast<std::size_t>(r)].size());
      }
    }
    running_.assign(static_cast<std::size_t>(plan.ranks), RunningCompute{});
    last_group_.assign(static_cast<std::size_t>(plan.ranks), std::numeric_limits<int>::min());
    ranks_on_gpu_.resize(static_cast<std::size_t>(topology.gpu_count()));
    for (int r = 0; r < plan.ranks; ++r) {
      ranks_on_gpu_[static_cast<std::size_t>(placement_[static_cast<std::size_t>(r)])].push_back(r);
    }
  }

  SimulationResult run() {
    const auto wall_start = std::chrono::steady_clock::now();
    Picoseconds now = 0;
    std::vector<OpId> computes;
    std::vector<Transfer> transfers;
    for (std::uint64_t step = 0;; ++step) {
      // A pending SIGINT/SIGTERM stops a long simulation here (sim/core/interrupt.hpp).
      if (step % 4096 == 0) throw_if_interrupted();
      computes.clear();
      transfers.clear();
      tracker_.poll(computes, transfers);
      // Transfers first: a compute that starts with them overlaps them.
      for (std::size_t i = 0; i < transfers.size(); ++i) {
        // One step of an all-to-all on thousands of GPUs posts millions of transfers, each
        // routed on its first use: poll there too, not only between steps.
        if (i % 4096 == 4095) throw_if_interrupted();
        post_transfer(transfers[i], now);
      }
      for (OpId id : computes) start_compute(id, now);
      network_->settle(now);
      follow_traffic(now);
      if (options_.record_link_samples) sampler_.sample(now, *network_, result_.link_samples);

      const auto net_next = network_->next_change_ps();
      if (queue_.empty() && !net_next) break;
      Picoseconds next = queue_.empty() ? *net_next : queue_.next_time_ps();
      if (net_next && *net_next < next) next = *net_next;
      // Stop-at-time. An unfinished op ends at one of the pending events, the earliest of which
      // is no earlier than next (next may be a stale completion: hence only while ops remain),
      // so the makespan is at least next.
      if (next > options_.stop_after_ps && !tracker_.all_done()) {
        result_.stopped_at_ps = next;
        result_.sim_wall_s = seconds_since(wall_start);
        return std::move(result_);
      }
      now = next;
      if (net_next && *net_next == now) {
        network_->advance(now);
        finish_transfers(now);
      }
      while (!queue_.empty() && queue_.next_time_ps() == now) handle(queue_.pop().payload, now);
    }
    if (!tracker_.all_done()) {
      const auto blocked = tracker_.first_blocked(1);
      throw PlanError(blocked.front(),
                      fmt::format("simulation stalled at {}", plan_.describe(blocked.front())));
    }
    finalize();
    result_.events = queue_.scheduled() * events_factor_;
    result_.sim_wall_s = seconds_since(wall_start);
    return std::move(result_);
  }

 private:
  TransferCalendar& calendar() { return *this; }

  static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  std::unique_ptr<TransferModel> make_network(const Topology& topology,
                                              const CalibrationProfile& profile,
                                              const SimulationOptions& options) {
    auto model = std::make_unique<FlowTransferModel>(topology, profile, calendar(),
                                                     options.record_link_samples);
    model->use_symmetry(symmetry_);
    if (plan_.comm_style == CommStyle::nccl_ring) {
      // A quotient's transfers reach full ranks, whose lanes come from the full placement.
      model->use_collective_lanes(
          collective_lanes(symmetry_ != nullptr ? symmetry_->full_placement
                                                : placement_of(plan_, topology, options, nullptr),
                           plan_.collective_ranks, topology));
    }
    return model;
  }

  // The GPU a transfer goes to: in a quotient, that of the rank the sender reaches in the
  // full plan (rank_shift_symmetry.hpp), not the representative that receives it.
  int destination_gpu(OpId send, OpId recv) const {
    if (symmetry_ == nullptr) return placement_[static_cast<std::size_t>(recv.rank)];
    if (symmetry_->peers_by_offset) return offset_quotient_destination(send);
    const int full = symmetry_->full_destination(send.rank, recv.rank);
    return symmetry_->full_placement[static_cast<std::size_t>(full)];
  }
  // An offset quotient's send names its full peer (class_plan.hpp keep_class_programs).
  int offset_quotient_destination(OpId send) const {
    const int full = plan_.programs[static_cast<std::size_t>(send.rank)].op(send.index).peer;
    return symmetry_->full_placement[static_cast<std::size_t>(full)];
  }
  void wake_at(Picoseconds at_ps, std::int64_t token) override {
    queue_.push(at_ps, {EventKind::transfer_wake, 0, token, 0});
  }

  // Re-rates a running compute whose stretch may have changed.
  void restretch(int rank, Picoseconds now) {
    RunningCompute& run = running_[static_cast<std::size_t>(rank)];
    if (run.index < 0) return;
    const double stretch = stretch_.of(rank);
    if (stretch == run.stretch) return;
    run.remaining_ps -= static_cast<double>(now - run.since_ps) / run.stretch;
    run.remaining_ps = std::max(run.remaining_ps, 0.0);
    run.since_ps = now;
    run.stretch = stretch;
    schedule_completion(rank, now);
  }

  // A compute started or ended on `rank`'s node: re-rate the node's others.
  void node_load_changed(int rank, int delta, Picoseconds now) {
    stretch_.compute_runs(rank, delta);
    if (!stretch_.shares_cores()) return;
    const int node = stretch_.node_of(rank);
    for (int r = 0; r < plan_.ranks; ++r) {
      if (r != rank && stretch_.node_of(r) == node) restretch(r, now);
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
    run.start_ps = now;
    const ComputeModel::StreamCost cost = compute_.stream_cost(program, id.index);
    run.remaining_ps = static_cast<double>(cost.duration_ps);
    run.since_ps = now;
    node_load_changed(id.rank, +1, now);
    run.stretch = stretch_.of(id.rank);
    RankStream& stream = streams_[static_cast<std::size_t>(id.rank)];
    stream.gaps_ps += std::max<Picoseconds>(0, now - stream.stream_free_ps);
    if (options_.record_ops) op_timing(id).start_ps = now;
    result_.ranks[static_cast<std::size_t>(id.rank)].compute_flops += cost.flops;
    schedule_completion(id.rank, now);
  }

  void finish_compute(const EventPayload& e, Picoseconds now) {
    RunningCompute& run = running_[static_cast<std::size_t>(e.rank)];
    if (e.version != run.version || run.index != e.index) return;  // rescheduled
    if (options_.record_ops) op_timing({e.rank, static_cast<int>(e.index)}).end_ps = now;
    RankTotals& totals = result_.ranks[static_cast<std::size_t>(e.rank)];
    totals.compute_busy_ps += now - run.start_ps;
    if (plan_.programs[static_cast<std::size_t>(e.rank)].op(static_cast<int>(e.index)).kind ==
        OpKind::compute) {
      ++totals.attention_calls;
      totals.attention_busy_ps += now - run.start_ps;
    }
    totals.end_ps = std::max(totals.end_ps, now);
    RankStream& stream = streams_[static_cast<std::size_t>(e.rank)];
    stream.stream_free_ps = std::max(stream.stream_free_ps, now);
    run.index = -1;
    node_load_changed(e.rank, -1, now);
    tracker_.finish({e.rank, static_cast<int>(e.index)});
  }

  void transfer_touches(int rank, int delta, Picoseconds now) { activity_.touch(rank, delta, now); }

  // Re-rates the computes of GPUs whose traffic changed at this settle.
  void follow_traffic(Picoseconds now) {
    network_->take_gpus_with_changed_traffic(changed_gpus_);
    if (!stretch_.interferes()) return;
    for (int gpu : changed_gpus_) {
      const double share = network_->gpu_traffic_share(gpu);
      for (int rank : ranks_on_gpu_[static_cast<std::size_t>(gpu)]) {
        stretch_.set_comm_share(rank, share);
        restretch(rank, now);
      }
    }
  }

  void post_transfer(const Transfer& t, Picoseconds now) {
    TransferRecord rec;
    rec.send = t.send;
    rec.recv = t.recv;
    rec.object = t.object;
    rec.bytes = plan_.object(t.object).bytes;
    rec.posted_ps = now;
    transfer_touches(t.send.rank, +1, now);
    transfer_touches(t.recv.rank, +1, now);
    count_comm_group(t.send);
    count_comm_group(t.recv);
    const TransferId id = network_->post(
        {placement_[static_cast<std::size_t>(t.send.rank)], destination_gpu(t.send, t.recv),
         rec.bytes, plan_.comm_style == CommStyle::nccl_ring},
        now);
    // Transfer ids double as indices of result_.transfers.
    if (id != posted_)
      throw std::logic_error("transfer model ids must be 0, 1, 2, ... in post order");
    ++posted_;
    if (options_.record_transfers) {
      result_.transfers.push_back(rec);
    } else {
      in_flight_.emplace(id, rec);
    }
  }

  // A rank's comm groups run one after the other, so a group id that differs from the rank's
  // last one is a new group.
  void count_comm_group(OpId op) {
    const int group = plan_.programs[static_cast<std::size_t>(op.rank)].op(op.index).comm_group;
    int& last = last_group_[static_cast<std::size_t>(op.rank)];
    if (group == last) return;
    last = group;
    ++result_.ranks[static_cast<std::size_t>(op.rank)].comm_groups;
  }

  OpTiming& op_timing(OpId op) {
    return result_.ops[static_cast<std::size_t>(op.rank)][static_cast<std::size_t>(op.index)];
  }

  // The transfer's record; a transfer not kept for the result leaves the in-flight set.
  TransferRecord take_record(TransferId id, Picoseconds now) {
    if (options_.record_transfers) {
      TransferRecord& rec = result_.transfers[static_cast<std::size_t>(id)];
      rec.end_ps = now;
      return rec;
    }
    const auto it = in_flight_.find(id);
    TransferRecord rec = it->second;
    in_flight_.erase(it);
    rec.end_ps = now;
    return rec;
  }

  // Books the transfers the model reports complete: op times, bytes, comm activity.
  void finish_transfers(Picoseconds now) {
    completed_.clear();
    network_->take_completed(completed_);
    for (TransferId id : completed_) {
      const TransferRecord rec = take_record(id, now);
      for (OpId op : {rec.send, rec.recv}) {
        if (options_.record_ops) op_timing(op) = {rec.posted_ps, now};
        RankTotals& totals = result_.ranks[static_cast<std::size_t>(op.rank)];
        totals.end_ps = std::max(totals.end_ps, now);
      }
      note_output_arrival(rec.recv, now);
      if (options_.record_route_busy) {
        const std::pair<int, int> route{placement_[static_cast<std::size_t>(rec.send.rank)],
                                        destination_gpu(rec.send, rec.recv)};
        result_.route_busy_ps[route] += static_cast<double>(now - rec.posted_ps);
      }
      result_.ranks[static_cast<std::size_t>(rec.send.rank)].bytes_sent += rec.bytes;
      RankTotals& receiver = result_.ranks[static_cast<std::size_t>(rec.recv.rank)];
      receiver.bytes_received += rec.bytes;
      ++receiver.transfers_received;
      receiver.transfer_time_ps += now - rec.posted_ps;
      receiver.slowest_transfer_ps = std::max(receiver.slowest_transfer_ps, now - rec.posted_ps);
      transfer_touches(rec.send.rank, -1, now);
      transfer_touches(rec.recv.rank, -1, now);
      tracker_.finish_transfer({rec.send, rec.recv, rec.object});
    }
  }

  // A final output that reaches its owner ends the owner's exposed communication no earlier.
  void note_output_arrival(OpId recv, Picoseconds now) {
    const RankProgram& program = plan_.programs[static_cast<std::size_t>(recv.rank)];
    const DataObject& obj = plan_.object(program.writes(recv.index)[0]);
    if (!obj.output || obj.home_rank != recv.rank) return;
    RankStream& stream = streams_[static_cast<std::size_t>(recv.rank)];
    stream.output_arrived_ps = std::max(stream.output_arrived_ps, now);
  }

  void handle(const EventPayload& e, Picoseconds now) {
    switch (e.kind) {
      case EventKind::compute_done:
        finish_compute(e, now);
        break;
      case EventKind::transfer_wake:
        network_->wake(e.index, now);
        finish_transfers(now);
        break;
    }
  }

  void finalize() {
    for (int r = 0; r < plan_.ranks; ++r) {
      auto& totals = result_.ranks[static_cast<std::size_t>(r)];
      const RankStream& stream = streams_[static_cast<std::size_t>(r)];
      totals.exposed_comm_ps = stream.gaps_ps + std::max<Picoseconds>(0, stream.output_arrived_ps -
                                                                             stream.stream_free_ps);
      totals.comm_active_ps = activity_.active_ps(r);
      totals.peak_bytes = tracker_.peak_bytes(r);
      totals.peak_breakdown = tracker_.peak_breakdown(r);
      result_.makespan_ps = std::max(result_.makespan_ps, totals.end_ps);
    }
    if (symmetry_ != nullptr) expand_classes();
    result_.single_gpu_s = compute_.single_gpu_time_s();
    result_.warnings = compute_.warnings();
  }

  // Every rank of the full ring gets its class representative's totals; every copy of a
  // class scheduled the same events (a work-block quotient's compute balance apart, below).
  void expand_classes() {
    const int k = plan_.ranks;
    const int p = symmetry_->full_ranks;
    std::vector<RankTotals> full(static_cast<std::size_t>(p));
    const std::vector<int>& class_of_rank = symmetry_->class_of_rank;
    for (int r = 0; r < p; ++r) {
      const int c = class_of_rank.empty() ? r % k : class_of_rank[static_cast<std::size_t>(r)];
      full[static_cast<std::size_t>(r)] = result_.ranks[static_cast<std::size_t>(c)];
    }
    // A work-block quotient's ranks differ in work: where their FLOPs are affine in the rank,
    // the mean lies halfway between the end ranks' and the most at one of them.
    if (const auto& work = symmetry_->work; work && work->end_rank_flops) {
      const auto [first_flops, last_flops] = *work->end_rank_flops;
      const double mean_flops = (first_flops + last_flops) / 2.0;
      if (mean_flops > 0) {
        result_.counted_compute_balance = std::max(first_flops, last_flops) / mean_flops;
      }
    }
    result_.ranks = std::move(full);
    events_factor_ = static_cast<std::uint64_t>(p / k);
  }

  const Plan& plan_;
  const SimulationOptions& options_;
  const RingSymmetry* symmetry_;  // a quotient plan's classes, or null
  std::uint64_t events_factor_ = 1;
  ComputeModel compute_;
  Tracker tracker_;
  std::unique_ptr<TransferModel> network_;
  std::vector<int> placement_;  // rank -> GPU
  ComputeStretch stretch_;
  CommActivity activity_;
  EventQueue<EventPayload> queue_;
  std::vector<RunningCompute> running_;
  std::vector<RankStream> streams_;
  TransferId posted_ = 0;
  std::unordered_map<TransferId, TransferRecord> in_flight_;  // when not recording transfers
  std::vector<TransferId> completed_;
  std::vector<int> last_group_;  // per rank: the comm group of its last posted transfer
  std::vector<std::vector<int>> ranks_on_gpu_;
  std::vector<int> changed_gpus_;
  LinkSampler sampler_;
  SimulationResult result_;
};

}  // namespace

SimulationResult simulate(const Plan& plan, const Topology& topology,
                          const CalibrationProfile& profile, const SimulationOptions& options) {
  return Simulation<PlanTracker>(plan, PlanTracker(plan), topology, profile, options).run();
}

SimulationResult simulate_windowed(ProgramSource& source, const Topology& topology,
                                   const CalibrationProfile& profile,
                                   const SimulationOptions& options) {
  if (options.record_ops || options.record_transfers || options.record_link_samples) {
    throw std::invalid_argument(
        "simulate_windowed: op, transfer and link records need the whole plan (simulate())");
  }
  return Simulation<WindowedTracker>(source.plan(), WindowedTracker(source, source.lookahead_ops()),
                                     topology, profile, options)
      .run();
}

SimulationResult simulate_classes(const Plan& quotient, const RingSymmetry& symmetry,
                                  const Topology& topology, const CalibrationProfile& profile,
                                  bool record_route_busy, Picoseconds stop_after_ps) {
  SimulationOptions options;
  options.record_route_busy = record_route_busy;
  options.stop_after_ps = stop_after_ps;
  return simulate_classes(quotient, symmetry, topology, profile, options);
}

SimulationResult simulate_classes(const Plan& quotient, const RingSymmetry& symmetry,
                                  const Topology& topology, const CalibrationProfile& profile,
                                  const SimulationOptions& options) {
  if (options.record_ops || options.record_link_samples || !options.placement.empty()) {
    throw std::invalid_argument(
        "simulate_classes: op records, link samples and a placement need the full plan");
  }
  // An offset quotient's sends and recvs name full ranks (class_plan.hpp keep_class_programs).
  const int peer_ranks = symmetry.peers_by_offset ? symmetry.full_ranks : 0;
  return Simulation<PlanTracker>(quotient, PlanTracker(quotient, peer_ranks), topology, profile,
                                 options, &symmetry)
      .run();
}

SimulationResult simulate_classes_windowed(ProgramSource& source, const RingSymmetry& symmetry,
                                           const Topology& topology,
                                           const CalibrationProfile& profile,
                                           bool record_route_busy, Picoseconds stop_after_ps) {
  SimulationOptions options;
  options.record_route_busy = record_route_busy;
  options.stop_after_ps = stop_after_ps;
  // An offset quotient's sends and recvs name full ranks (class_plan.hpp keep_class_programs).
  const int peer_ranks = symmetry.peers_by_offset ? symmetry.full_ranks : 0;
  return Simulation<WindowedTracker>(source.plan(),
                                     WindowedTracker(source, source.lookahead_ops(), peer_ranks),
                                     topology, profile, options, &symmetry)
      .run();
}

}  // namespace tilesim
