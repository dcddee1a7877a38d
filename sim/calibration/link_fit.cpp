#include "sim/calibration/link_fit.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim::calibration {

LinkFit fit_link(const std::vector<MessageTiming>& timings) {
  std::vector<Sample> samples;
  for (const MessageTiming& t : timings) samples.push_back({t.bytes, t.seconds});
  LinkFit fit;
  fit.line = fit_line(samples, FitWeights::relative);
  if (fit.line.slope <= 0.0) {
    throw std::invalid_argument("fit_link: time does not grow with message size");
  }
  fit.alpha_s = std::max(fit.line.intercept, 0.0);
  fit.beta_bytes_per_s = 1.0 / fit.line.slope;
  return fit;
}

}  // namespace tilesim::calibration
