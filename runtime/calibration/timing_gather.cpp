#include "runtime/calibration/timing_gather.hpp"

#include <cstdint>

namespace tilesim::runtime {

std::vector<std::vector<OpTiming>> gather_timings(const MpiSession& mpi,
                                                  const std::vector<OpTiming>& mine) {
  std::vector<std::int64_t> flat;
  flat.reserve(2 * mine.size());
  for (const OpTiming& t : mine) {
    flat.push_back(t.start_ps);
    flat.push_back(t.end_ps);
  }
  const auto all = mpi.gather(flat);
  std::vector<std::vector<OpTiming>> out(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    for (std::size_t i = 0; i + 1 < all[r].size(); i += 2) {
      out[r].push_back(OpTiming{all[r][i], all[r][i + 1]});
    }
  }
  return out;
}

}  // namespace tilesim::runtime
