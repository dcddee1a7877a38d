#include "sim/validation/regress_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/core/atomic_file.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/yaml_reader.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"

namespace tilesim::validation {
namespace {

constexpr const char* kFigureNames[] = {"makespan_s", "comm_bytes_total", "peak_memory_bytes_max"};

std::string resolved_scenario(const RegressCase& c) {
  return (std::filesystem::path(c.file).parent_path() / c.scenario_path)
      .lexically_normal()
      .string();
}

}  // namespace

double RegressFigure::rel_change() const {
  if (expected == 0.0) return got == 0.0 ? 0.0 : 1.0;
  return (got - expected) / std::abs(expected);
}

RegressCase load_regress_case(const std::string& path) {
  const YamlMap root(load_yaml_file(path), path, "");
  root.allow_only({"scenario", "set", "tolerance", "expected"});
  RegressCase c;
  c.file = path;
  c.scenario_path = root.string("scenario");
  if (root.has("set")) {
    const YAML::Node sets = root.node("set");
    if (!sets.IsSequence()) root.fail("set", "expected a list of key.path=value strings");
    for (const YAML::Node& s : sets) {
      // A map or list entry has no string value (yaml-cpp would throw its own exception).
      if (!s.IsScalar()) root.fail("set", "expected a list of key.path=value strings");
      const std::string text = s.as<std::string>();
      if (text.find('=') == std::string::npos) root.fail("set", "expected key.path=value");
      c.sets.push_back(text);
    }
  }
  c.tolerance = root.number("tolerance");
  if (!(c.tolerance >= 0.0 && c.tolerance < 1.0))
    root.fail("tolerance", "expected a number in [0, 1)");
  const YamlMap expected = root.map("expected");
  expected.allow_only({"makespan_s", "comm_bytes_total", "peak_memory_bytes_max"});
  for (const char* name : kFigureNames) {
    const double v = expected.number(name);
    if (!(v >= 0.0)) expected.fail(name, "expected a non-negative number");
    c.figures.push_back(RegressFigure{name, v, 0.0});
  }
  return c;
}

bool run_regress_case(RegressCase& c) {
  const PreparedScenario p = prepare_scenario(resolved_scenario(c), c.sets);
  const Plan plan = build_valid_plan(p.scenario);
  const Figures f = summarize(simulate(plan, p.topology, p.profile));
  bool passed = true;
  for (RegressFigure& fig : c.figures) {
    fig.got = fig.name == "makespan_s"         ? f.makespan_s
              : fig.name == "comm_bytes_total" ? f.comm_bytes_total
                                               : f.peak_memory_bytes_max;
    if (std::abs(fig.got - fig.expected) > c.tolerance * std::abs(fig.expected)) passed = false;
  }
  return passed;
}

void write_regress_case(std::ostream& out, const RegressCase& c) {
  out << "# Cost-model regression case (tilesim regress); expectations written by --update.\n";
  out << "scenario: " << c.scenario_path << "\n";
  if (!c.sets.empty()) {
    out << "set: [";
    for (std::size_t i = 0; i < c.sets.size(); ++i)
      out << (i ? ", " : "") << '"' << c.sets[i] << '"';
    out << "]\n";
  }
  out << fmt::format("tolerance: {}\n", c.tolerance);
  out << "expected:\n";
  for (const RegressFigure& fig : c.figures)
    out << fmt::format("  {}: {:.10g}\n", fig.name, fig.got);
}

void update_regress_case(const RegressCase& c) {
  AtomicFile out(c.file, "");
  write_regress_case(out.stream(), c);
  out.commit();
}

std::vector<std::string> regress_case_files(const std::string& directory) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) {
    throw InputError(directory, 0, "", "expected a directory of regression case files");
  }
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(directory, 0, "", "no *.yaml case files in this directory");
  return files;
}

}  // namespace tilesim::validation
