#include "tools/cli/table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tilesim::cli {

std::string Table::render() const {
  std::vector<std::size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      if (i > 0) out += "  ";
      out += std::string(width[i] - cell.size(), ' ') + cell;
    }
    return out + "\n";
  };
  std::string out = line(header_);
  std::size_t total = 0;
  for (auto w : width) total += w + 2;
  out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string Table::csv() const {
  auto line = [](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out += ",";
      out += row[i].find(',') != std::string::npos ? "\"" + row[i] + "\"" : row[i];
    }
    return out + "\n";
  };
  std::string out = line(header_);
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string approximate_rows_note(const std::vector<std::string>& labels) {
  if (labels.empty()) return {};
  return fmt::format(
      "approximate (role quotient, rank_roles.hpp: one block of whole nodes stands for every "
      "block; or work-block quotient, symmetric_plan.hpp: under a causal mask the heaviest "
      "block's work stands for every block's): {}\n",
      fmt::join(labels, ", "));
}

}  // namespace tilesim::cli
