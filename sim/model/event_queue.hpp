// A discrete-event queue: a binary heap ordered by (time, sequence number), so
// events at the same picosecond run in the order they were scheduled. Typed
// payloads instead of callbacks keep it a plain value (copyable, no globals).
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/core/units.hpp"

namespace tilesim {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    Picoseconds time_ps;
    std::uint64_t sequence;
    Payload payload;
  };

  void push(Picoseconds time_ps, Payload payload) {
    heap_.push(Event{time_ps, next_sequence_++, payload});
  }
  bool empty() const { return heap_.empty(); }
  Picoseconds next_time_ps() const { return heap_.top().time_ps; }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }
  std::uint64_t scheduled() const { return next_sequence_; }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_ps != b.time_ps ? a.time_ps > b.time_ps : a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace tilesim
