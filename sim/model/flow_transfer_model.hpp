// The max-min flow model behind the TransferModel seam (sim/network/transfer_model.hpp).
//
// A transfer from GPU s to GPU d follows the router's route (sim/topology) and goes through
// three phases:
//   1. software latency: bytes start to move alpha after the post, alpha = the profile's
//      alpha of the slowest link class on the route (nvlink < pcie < upi < ethernet < ib);
//   2. a flow in the max-min fair FlowNetwork (sim/network/flow_network.hpp) over the
//      route's links, each of capacity C_l = spec bandwidth x the class's efficiency, the
//      flow itself capped at the smallest flow_cap of the classes on its route (one NCCL
//      pair cannot fill a link; 0 = no cap);
//   3. propagation: the transfer completes the route's latency after its last byte left.
// A transfer of 0 bytes skips phase 2; one between ranks on the same GPU has an empty route
// (no links, no cap: it moves instantly after alpha). Phases 1 and 3 are calendar wake-ups,
// phase 2's end is next_change_ps().
//
// A collective transfer (TransferRequest::collective, plan.hpp CommStyle::nccl_ring) from s to
// d runs as n sub-transfers of bytes / n, one per lane of s's node (use_collective_lanes: the
// GPUs its communicator has there, in rank order), each through the three phases above and
// the transfer completes when the last one has: within a node the lanes follow s -> d (NCCL's
// channels, each under the link's flow cap: one flow of multiplicity n); across nodes lane i goes
// s -> L_i -> L'_i -> d, L_i the i-th lane GPU of s's node and L'_i that of d's (n = the
// smaller lane count), so the step leaves by every lane's NIC as NCCL's rings do.
//
// GPU traffic (compute interference): a flow of at least the profile's
// comm_slowdown_min_bytes loads every GPU it moves through (sender, receiver and any GPU
// relaying on its route) with its current rate; smaller messages are latency-bound and
// load nothing, nor does a transfer in phase 1 or 3. A GPU's share is
//   min(1, sum of those rates / R_gpu),  R_gpu = max over the GPU's out-links l of
//   min(C_l, flow cap of l's class),
// the rate one transfer alone moves out of the GPU (what the calibration probe, one pair
// exchanging large messages, drives: share 1). Sums are exact 0 when no flow is left.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/model/calibration_profile.hpp"
#include "sim/model/ring_symmetry.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/transfer_model.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

// The link class whose alpha a transfer on `route` pays: the slowest class on it (nvlink <
// pcie < upi < ethernet < ib); nvlink for an empty route.
LinkClass alpha_class(const Topology& topology, const Route& route);

class FlowTransferModel final : public TransferModel {
 public:
  // Throws InputError (the profile's file, key links.<class>) when the topology has a link
  // class the profile gives no costs for. The topology and the profile must outlive the model.
  FlowTransferModel(const Topology& topology, const CalibrationProfile& profile,
                    TransferCalendar& calendar, bool record_link_loads);
  // The model keeps a reference to its profile: a temporary one would dangle after the
  // constructor's full expression (ASan: stack-use-after-scope in post()).
  FlowTransferModel(const Topology& topology, CalibrationProfile&& profile,
                    TransferCalendar& calendar, bool record_link_loads) = delete;

  // Simulates one representative per class (ring_symmetry.hpp): each flow is posted over the
  // orbit representatives of its links with the class's multiplicity, and its GPU traffic is
  // counted on the representative GPUs. The symmetry must outlive the model.
  // Call before the first post (what is derived per route depends on it).
  void use_symmetry(const RingSymmetry* symmetry) { symmetry_ = symmetry; }

  // The lanes of each GPU's node for collective transfers: lanes_by_gpu[g] lists, in rank
  // order, the GPUs that g's communicator has on g's node (empty: g sends no collective).
  // Without it a collective transfer is one flow.
  void use_collective_lanes(std::vector<std::vector<int>> lanes_by_gpu) {
    lanes_by_gpu_ = std::move(lanes_by_gpu);
  }

  TransferId post(const TransferRequest& request, Picoseconds now) override;
  void wake(std::int64_t token, Picoseconds now) override;
  void settle(Picoseconds now) override;
  std::optional<Picoseconds> next_change_ps() const override;
  void advance(Picoseconds now) override;
  void take_completed(std::vector<TransferId>& out) override;

  int link_count() const override;
  void take_links_to_sample(std::vector<int>& out) override;
  double link_load_bytes_per_s(int link) const override;
  double gpu_traffic_share(int gpu) const override;
  void take_gpus_with_changed_traffic(std::vector<int>& out) override;

 private:
  enum class Phase : std::uint8_t { software_latency, flowing, propagation };
  // What every transfer on one route needs, derived on the route's first use: a ring posts
  // millions of transfers over a few thousand routes. Its lists live in one arena
  // (fact_ints_), not in vectors of their own: an offset quotient of pass-Q or all-gather KV
  // uses K (P - 1) routes (4.2M on 4096 GPUs), and three vectors and a cached Route a route
  // were most of its memory.
  struct RouteFacts {
    double alpha_s = 0.0;               // of alpha_class
    double rate_cap_bytes_per_s = 0.0;  // the smallest flow cap on the route, 0: none
    Picoseconds latency_ps = 0;         // the route's
    std::size_t begin = 0;              // in fact_ints_: the lists below, in this order
    std::uint32_t route_links = 0;      // the route's links
    std::uint32_t flow_links = 0;       // symmetric: the folded links, else 0 (the route's)
    std::uint32_t gpus = 0;             // gpus_of: the GPUs its traffic loads
  };
  // One flow's worth of a transfer (a collective transfer has one per lane), keyed by the
  // transfer's id for its first lane and by -1, -2, ... for the others.
  struct InFlight {
    TransferId transfer = 0;
    const RouteFacts* facts = nullptr;
    int src_gpu = 0;
    int dst_gpu = 0;
    double bytes = 0.0;
    Phase phase = Phase::software_latency;
    double counted_rate_bytes_per_s = 0.0;  // its share of the GPUs' traffic now
    // Identical flows it stands for: a collective step's lanes inside one node share the path,
    // bytes and start, so they are one flow posted with this multiplicity on every link
    // (FlowSpec::link_multiplicity: k flows' shares, each at the flow's rate).
    int copies = 1;
  };
  std::span<const int> route_links(const RouteFacts& facts) const;
  // The links its flow is posted on, and (symmetric) their multiplicities, as many.
  std::span<const int> flow_links(const RouteFacts& facts) const;
  std::span<const int> link_multiplicity(const RouteFacts& facts) const;
  std::span<const int> gpus(const RouteFacts& facts) const;

  void start_flow(TransferId id, InFlight& transfer, Picoseconds now);
  void begin_propagation(TransferId id, InFlight& transfer, Picoseconds now);
  // Moves a transfer's contribution to its GPUs' traffic to `rate` (0 when it stops).
  void count_traffic(InFlight& transfer, double rate_bytes_per_s);
  const RouteFacts& facts_of(int src_gpu, int dst_gpu);
  // Lane `lane` of a cross-node collective transfer: src -> L -> L' -> dst.
  const RouteFacts& lane_facts_of(int src_gpu, int dst_gpu, int lane, int src_lane_gpu,
                                  int dst_lane_gpu);
  const RouteFacts& add_facts(std::int64_t key, const Route& route, int src_gpu, int dst_gpu);
  // Counts a finished flow's sub-transfer; the transfer completes with its last.
  void finish_part(TransferId transfer);
  void gpus_of(const Route& route, int src_gpu, int dst_gpu, std::vector<int>& out) const;
  // Maps a flow onto the orbit representatives of its links, with multiplicities.
  void fold_onto_classes(FlowSpec& spec) const;

  const Topology& topology_;
  const RingSymmetry* symmetry_ = nullptr;
  const CalibrationProfile& profile_;
  TransferCalendar& calendar_;
  bool record_link_loads_;
  Router router_;
  FlowNetwork network_;
  TransferId next_id_ = 0;
  std::int64_t next_extra_part_ = 0;                // lanes past the first: -1, -2, ...
  std::unordered_map<TransferId, int> parts_left_;  // collective transfers of 2+ lanes
  std::vector<std::vector<int>> lanes_by_gpu_;
  // by src x gpu_count + dst; a lane's by ((lane + 1) x gpu_count + src) x gpu_count + dst
  std::unordered_map<std::int64_t, RouteFacts> route_facts_;
  std::vector<int> fact_ints_;                          // RouteFacts' lists
  std::unordered_map<TransferId, InFlight> in_flight_;  // posted, not yet completed
  std::unordered_map<FlowId, TransferId> transfer_of_flow_;
  std::vector<TransferId> completed_;
  std::vector<int> touched_links_;  // flows started or ended since the last sample
  double traffic_min_bytes_;
  std::vector<double> gpu_rate_bytes_per_s_;  // R_gpu
  std::vector<double> gpu_traffic_bytes_per_s_;
  std::vector<int> gpu_traffic_flows_;  // flows counted on the GPU
  std::vector<char> gpu_changed_;
  std::vector<int> changed_gpus_;
};

}  // namespace tilesim
