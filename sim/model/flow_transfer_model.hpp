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
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/model/calibration_profile.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/transfer_model.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

class FlowTransferModel final : public TransferModel {
 public:
  // Throws InputError (the profile's file, key links.<class>) when the topology has a link
  // class the profile gives no costs for. The topology must outlive the model.
  FlowTransferModel(const Topology& topology, const CalibrationProfile& profile,
                    TransferCalendar& calendar, bool record_link_loads);

  TransferId post(const TransferRequest& request, Picoseconds now) override;
  void wake(std::int64_t token, Picoseconds now) override;
  void settle(Picoseconds now) override;
  std::optional<Picoseconds> next_change_ps() const override;
  void advance(Picoseconds now) override;
  void take_completed(std::vector<TransferId>& out) override;

  int link_count() const override;
  void take_links_to_sample(std::vector<int>& out) override;
  double link_load_bytes_per_s(int link) const override;

 private:
  enum class Phase : std::uint8_t { software_latency, flowing, propagation };
  struct InFlight {
    const Route* route = nullptr;
    double bytes = 0.0;
    Phase phase = Phase::software_latency;
  };

  void start_flow(TransferId id, InFlight& transfer, Picoseconds now);
  void begin_propagation(TransferId id, InFlight& transfer, Picoseconds now);

  const Topology& topology_;
  const CalibrationProfile& profile_;
  TransferCalendar& calendar_;
  bool record_link_loads_;
  Router router_;
  FlowNetwork network_;
  TransferId next_id_ = 0;
  std::unordered_map<TransferId, InFlight> in_flight_;  // posted, not yet completed
  std::unordered_map<FlowId, TransferId> transfer_of_flow_;
  std::vector<TransferId> completed_;
  std::vector<int> touched_links_;  // flows started or ended since the last sample
};

}  // namespace tilesim
