// A plain-text table with right-aligned columns, for terminal reports.
#pragma once

#include <string>
#include <vector>

namespace tilesim::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  std::string render() const;
  // Comma-separated, header first; cells are quoted when they hold a comma.
  std::string csv() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// The line under a compare, tune or sweep table that names the rows simulated on a role
// quotient (schedule.symmetry: roles, or auto beyond 256 exact classes: approximate); empty
// when there are none.
std::string approximate_rows_note(const std::vector<std::string>& labels);

}  // namespace tilesim::cli
