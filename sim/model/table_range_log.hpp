// Lookups that left a calibration table, collected over one simulation so that each table end
// gives one warning (how many lookups, how far out, which rule answered them).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sim/model/efficiency_curve.hpp"

namespace tilesim {

class TableRangeLog {
 public:
  // `table` names the table (e.g. "forward d128 efficiency"); inside lookups are ignored.
  void note(const std::string& table, const CurveLookup& lookup, double tokens);
  bool empty() const { return entries_.empty(); }
  // One line per (table, side), in a fixed order; `profile` names the calibration file.
  std::vector<std::string> warnings(const std::string& profile) const;

 private:
  struct Entry {
    double edge_tokens = 0.0;
    double extreme_tokens = 0.0;  // the farthest lookup from the table
    long count = 0;
  };
  std::map<std::tuple<std::string, TableSide>, Entry> entries_;
};

}  // namespace tilesim
