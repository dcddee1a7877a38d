#include "sim/model/occupancy.hpp"

#include <algorithm>
#include <cmath>

namespace tilesim {

double OccupancyModel::ctas(int batch, int heads, double tokens) const {
  return static_cast<double>(batch) * heads * std::ceil(tokens / cta_tokens);
}

double OccupancyModel::occupancy(double ctas) const {
  if (!enabled() || ctas <= 0) return 1.0;
  const double slots = static_cast<double>(sms) * ctas_per_sm;
  return ctas / (slots * std::ceil(ctas / slots));
}

double OccupancyModel::factor(double ctas) const {
  if (!enabled()) return 1.0;
  return occupancy(ctas) / occupancy(reference_ctas);
}

}  // namespace tilesim
