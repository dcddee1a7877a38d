// The job-wide result of `run --check`: every rank's output checks (runtime/owned_outputs.hpp)
// combined on rank 0 and judged per pass against the backend's tolerance
// (runtime/backend_factory.hpp: cpu 1e-5 abs forward, 1e-4 abs backward).
// Text: one line per pass with outputs,
//   "  check             max abs error ..., max rel error ... over N values (tolerance T abs):
//   passed"
// for O/LSE and "  check backward    ..." for dQ/dKV. JSON: "check" holds the overall figures
// (max over passes; tolerance_abs the largest applied) and "forward"/"backward" objects.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/executor/owned_outputs.hpp"

namespace tilesim::runtime {

class CheckReport {
 public:
  // One rank's checks as a flat array for the gather to rank 0.
  static std::vector<double> pack(const OutputChecks& checks);

  CheckReport(const std::string& backend, const std::vector<std::vector<double>>& ranks);

  bool passed() const;
  void print() const;          // the text lines, on stdout
  void print_failure() const;  // one line on stderr per failed pass
  nlohmann::ordered_json json() const;

 private:
  struct PassCheck {
    const char* name;
    CheckResult result;
    double tolerance;
    bool present() const { return result.values > 0; }
    bool passed() const { return result.max_abs_error <= tolerance; }
  };
  PassCheck forward_;
  PassCheck backward_;
};

}  // namespace tilesim::runtime
