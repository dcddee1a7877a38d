// Link load samples for traces: after each settle, the load (sum of flow rates, bytes/s) of
// every link the transfer model says may have changed, recorded only when it differs from
// that link's last sample. Loads are piecewise constant between samples.
#pragma once

#include <map>
#include <vector>

#include "sim/model/simulation_result.hpp"
#include "sim/network/transfer_model.hpp"

namespace tilesim {

class LinkSampler {
 public:
  void sample(Picoseconds now, TransferModel& model, std::vector<LinkSample>& out) {
    model.take_links_to_sample(links_);
    for (int l : links_) {
      const double load = model.link_load_bytes_per_s(l);
      auto [it, inserted] = last_load_.emplace(l, load);
      if (!inserted && it->second == load) continue;
      it->second = load;
      out.push_back({now, l, load});
    }
  }

 private:
  std::vector<int> links_;
  std::map<int, double> last_load_;
};

}  // namespace tilesim
