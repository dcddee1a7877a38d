#include "runtime/mpi/check_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "runtime/mpi/backend_factory.hpp"

namespace tilesim::runtime {
namespace {

CheckResult unpack(const std::vector<double>& v, std::size_t at) {
  return CheckResult{v[at], v[at + 1], static_cast<std::int64_t>(v[at + 2])};
}

}  // namespace

std::vector<double> CheckReport::pack(const OutputChecks& checks) {
  return {checks.forward.max_abs_error,
          checks.forward.max_abs_reference,
          static_cast<double>(checks.forward.values),
          checks.backward.max_abs_error,
          checks.backward.max_abs_reference,
          static_cast<double>(checks.backward.values)};
}

CheckReport::CheckReport(const std::string& backend, const std::vector<std::vector<double>>& ranks)
    : forward_{"forward", {}, backend_tolerance(backend, Pass::fwd)},
      backward_{"backward", {}, backend_tolerance(backend, Pass::bwd)} {
  for (const std::vector<double>& r : ranks) {
    forward_.result.combine(unpack(r, 0));
    backward_.result.combine(unpack(r, 3));
  }
}

bool CheckReport::passed() const { return forward_.passed() && backward_.passed(); }

void CheckReport::print() const {
  for (const PassCheck* p : {&forward_, &backward_}) {
    if (!p->present() && (p == &backward_ || backward_.present())) continue;
    fmt::print(
        "  {:<18}max abs error {:.3e}, max rel error {:.3e} over {} values "
        "(tolerance {:.0e} abs): {}\n",
        p == &forward_ ? "check" : "check backward", p->result.max_abs_error,
        p->result.max_rel_error(), p->result.values, p->tolerance,
        p->passed() ? "passed" : "FAILED");
  }
}

void CheckReport::print_failure() const {
  for (const PassCheck* p : {&forward_, &backward_}) {
    if (p->passed()) continue;
    fmt::print(stderr, "tilesim run: check failed: {} max abs error {:.3e} > {:.0e}\n", p->name,
               p->result.max_abs_error, p->tolerance);
  }
}

nlohmann::ordered_json CheckReport::json() const {
  CheckResult total = forward_.result;
  total.combine(backward_.result);
  double tolerance = 0.0;
  nlohmann::ordered_json j;
  j["max_abs_error"] = total.max_abs_error;
  j["max_rel_error"] = total.max_rel_error();
  j["values"] = total.values;
  for (const PassCheck* p : {&forward_, &backward_}) {
    if (p->present()) tolerance = std::max(tolerance, p->tolerance);
  }
  j["tolerance_abs"] = tolerance > 0.0 ? tolerance : forward_.tolerance;
  j["passed"] = passed();
  for (const PassCheck* p : {&forward_, &backward_}) {
    if (!p->present()) continue;
    j[p->name] = {{"max_abs_error", p->result.max_abs_error},
                  {"max_rel_error", p->result.max_rel_error()},
                  {"values", p->result.values},
                  {"tolerance_abs", p->tolerance},
                  {"passed", p->passed()}};
  }
  return j;
}

}  // namespace tilesim::runtime
