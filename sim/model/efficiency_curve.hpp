// A table of a fraction of peak (or a factor) over block size in tokens.
//
// Inside the table: linear interpolation in log2(tokens). Outside it, a stated rule (and the
// lookup says which side it left, so that the caller can warn):
//   below the first size n0, with a next size n1: the first segment's slope in log2 continued,
//     e(n) = e0 + (e1 - e0) * log2(n / n0) / log2(n1 / n0), at least kMinEfficiency: a block
//     smaller than any measured keeps losing efficiency at the rate the table shows (the fixed
//     cost of a call weighs more on less work);
//   above the last size: the last value held: large blocks sit on the kernel's plateau (FA3
//     forward d128 on H100 rises only from 625 to 648 TFLOP/s between 2K and 16K tokens);
//   a one-point table: that value everywhere.
#pragma once

#include <utility>
#include <vector>

namespace tilesim {

enum class TableSide { inside, below, above };

struct CurveLookup {
  double value = 1.0;
  TableSide side = TableSide::inside;
  double edge_tokens = 0.0;  // the table end it left (0 when inside)
};

struct EfficiencyCurve {
  static constexpr double kMinEfficiency = 0.01;
  std::vector<std::pair<double, double>> points;  // (block tokens, value), sorted by tokens
  CurveLookup lookup(double tokens) const;
  double at(double tokens) const { return lookup(tokens).value; }
};

}  // namespace tilesim
