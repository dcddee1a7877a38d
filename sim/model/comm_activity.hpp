// Which ranks have communication in flight, and for how long in all.
//
// A transfer touches its send and its recv rank from its post (both sides ready) to its
// completion (last byte arrived). A rank's comm_active_ps is the length of the union of
// those intervals: it counts the transfers touching it and adds now - since whenever the
// count falls back to 0.
#pragma once

#include <vector>

#include "sim/core/units.hpp"

namespace tilesim {

class CommActivity {
 public:
  explicit CommActivity(int ranks)
      : count_(static_cast<std::size_t>(ranks), 0),
        since_ps_(static_cast<std::size_t>(ranks), 0),
        active_ps_(static_cast<std::size_t>(ranks), 0) {}

  // A transfer touching `rank` was posted (+1) or completed (-1) at `now`. Returns whether
  // the rank went from idle to active or back.
  bool touch(int rank, int delta, Picoseconds now) {
    const auto r = static_cast<std::size_t>(rank);
    const bool was_active = count_[r] > 0;
    if (count_[r] == 0 && delta > 0) since_ps_[r] = now;
    count_[r] += delta;
    if (count_[r] == 0) active_ps_[r] += now - since_ps_[r];
    return was_active != (count_[r] > 0);
  }
  bool active(int rank) const { return count_[static_cast<std::size_t>(rank)] > 0; }
  Picoseconds active_ps(int rank) const { return active_ps_[static_cast<std::size_t>(rank)]; }

 private:
  std::vector<int> count_;
  std::vector<Picoseconds> since_ps_;
  std::vector<Picoseconds> active_ps_;
};

}  // namespace tilesim
