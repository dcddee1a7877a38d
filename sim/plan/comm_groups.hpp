// Fresh comm-group ids per rank for generators that chain several phases
// (all-to-all, ring steps, returns). Group ids only need to be distinct and
// consecutive within one rank's program (plan.hpp); sends and receives are
// matched by their order per (source, destination), not by group id.
#pragma once

#include <cstddef>
#include <vector>

namespace tilesim {

class CommGroups {
 public:
  explicit CommGroups(int ranks) : next_(static_cast<std::size_t>(ranks), 0) {}
  int take(int rank) { return next_[static_cast<std::size_t>(rank)]++; }

 private:
  std::vector<int> next_;
};

}  // namespace tilesim
