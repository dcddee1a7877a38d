#include "sim/model/table_range_log.hpp"

#include <fmt/format.h>

#include "sim/core/units.hpp"

namespace tilesim {

void TableRangeLog::note(const std::string& table, const CurveLookup& lookup, double tokens) {
  if (lookup.side == TableSide::inside) return;
  Entry& e = entries_[{table, lookup.side}];
  e.edge_tokens = lookup.edge_tokens;
  const bool below = lookup.side == TableSide::below;
  if (e.count == 0 || (below ? tokens < e.extreme_tokens : tokens > e.extreme_tokens)) {
    e.extreme_tokens = tokens;
  }
  ++e.count;
}

std::vector<std::string> TableRangeLog::warnings(const std::string& profile) const {
  std::vector<std::string> out;
  for (const auto& [key, e] : entries_) {
    const auto& [table, side] = key;
    const bool below = side == TableSide::below;
    out.push_back(fmt::format(
        "{}: {} table {} at {} tokens; {} lookup{} {} it ({} {}) {}", profile, table,
        below ? "starts" : "ends", format_tokens(static_cast<std::int64_t>(e.edge_tokens)), e.count,
        e.count == 1 ? "" : "s", below ? "below" : "above", below ? "down to" : "up to",
        format_tokens(static_cast<std::int64_t>(e.extreme_tokens)),
        below ? "continued its first segment's slope in log2(size)" : "held its last value"));
  }
  return out;
}

}  // namespace tilesim
