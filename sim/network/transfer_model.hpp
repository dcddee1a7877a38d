// The seam between the simulator and a network model.
//
// The simulator executes a plan; when both sides of a send/recv are posted it hands the
// network a transfer (source GPU, destination GPU, bytes) and later learns when its last
// byte arrived. How long that takes, what the transfer shares with others and how links
// are loaded meanwhile is the network model's business alone: the simulator holds no
// capacities, latencies or caps. The max-min flow model (sim/model/flow_transfer_model.hpp)
// is one implementation; a packet-level or NCCL-protocol model can implement the same
// interface and run the very same plans.
//
// Time. A model changes state at two kinds of instants:
//  - delays it chooses (a software latency before bytes move, a propagation latency after
//    the last byte): it books them on the simulator's TransferCalendar, so that they are
//    ordered with the simulator's own events by (time, order booked), exactly as if one
//    event queue held both, and the simulator calls wake(token) when one is due;
//  - instants that follow from rates (a flow's last byte): it reports the earliest as
//    next_change_ps() and the simulator calls advance(now) when it is due, before the
//    calendar's events of that picosecond.
// After posting and waking at `now`, the simulator calls settle(now) once so that the model
// shares bandwidth among what is in flight from now on; take_completed() then lists the
// transfers whose last byte has arrived. All in integer picoseconds; same calls, same
// answers (deterministic).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/units.hpp"

namespace tilesim {

using TransferId = std::int64_t;  // 0, 1, 2, ... in post order

struct TransferRequest {
  int src_gpu = 0;
  int dst_gpu = 0;
  double bytes = 0.0;  // >= 0; a 0-byte message still pays the latencies
  // A step of an NCCL ring collective (plan.hpp CommStyle::nccl_ring): split over the lanes
  // the model was given for the sender's GPU, where it has them.
  bool collective = false;
};

// The simulator's event calendar as a model sees it: one timed wake-up per booking.
class TransferCalendar {
 public:
  virtual void wake_at(Picoseconds at_ps, std::int64_t token) = 0;

 protected:
  ~TransferCalendar() = default;
};

class TransferModel {
 public:
  virtual ~TransferModel() = default;

  // Both sides of a transfer are posted at `now`.
  virtual TransferId post(const TransferRequest& request, Picoseconds now) = 0;
  // A wake-up this model booked on the calendar is due at `now`.
  virtual void wake(std::int64_t token, Picoseconds now) = 0;
  // Rates from `now` on, after the posts, wakes and completions at `now`.
  virtual void settle(Picoseconds now) = 0;
  // The earliest instant after the last settle at which the model changes state by itself.
  virtual std::optional<Picoseconds> next_change_ps() const = 0;
  // Performs the changes due at `now` (= next_change_ps()).
  virtual void advance(Picoseconds now) = 0;
  // Appends the transfers whose last byte arrived since the last call, in arrival order.
  virtual void take_completed(std::vector<TransferId>& out) = 0;

  // Compute interference: the share in [0, 1] of a GPU's transfer rate that bandwidth-bound
  // transfers moving through it (as sender, receiver or relay) use now; the model defines
  // the GPU's rate (flow_transfer_model.hpp: what one transfer alone moves out of it). And
  // the GPUs whose share changed since the last call (sorted, unique).
  virtual double gpu_traffic_share(int gpu) const = 0;
  virtual void take_gpus_with_changed_traffic(std::vector<int>& out) = 0;

  // Traces: links whose load may have changed since the last call (sorted, unique), and
  // the load of a link now. Only tracked when the model was built to record link loads.
  virtual int link_count() const = 0;
  virtual void take_links_to_sample(std::vector<int>& out) = 0;
  virtual double link_load_bytes_per_s(int link) const = 0;
};

}  // namespace tilesim
