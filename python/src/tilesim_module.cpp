// tilesim._core: the simulation verbs for Python (nanobind). Every function returns one JSON
// text, {"value": document} or {"error": {...}} (sim/verbs/item_map.hpp's guarded_item): the
// documents are those the CLI prints with --json, from the same code (sim/verbs/), and
// python/tilesim/__init__.py turns them into objects or raises tilesim.InputError.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "sim/report/html_report.hpp"
#include "sim/verbs/compare_verb.hpp"
#include "sim/verbs/plan_verb.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "sim/verbs/sweep_verb.hpp"
#include "sim/verbs/tune_verb.hpp"

namespace nb = nanobind;
using tilesim::ScenarioSource;

namespace {

using Overrides = std::vector<std::string>;
using Text = std::optional<std::string>;

// Runs a verb without the GIL (simulations take seconds; other Python threads may run).
template <typename Body>
std::string call(Body body) {
  nb::gil_scoped_release release;
  return tilesim::guarded_item(body);
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "tilesim's simulation verbs; use the tilesim package, not this module";
  m.def("simulate", [](const std::string& path, const Text& text, const Overrides& sets,
                       bool wall_clock) {
    return call([&] {
      return tilesim::simulation_document(tilesim::run_simulation({path, text, sets}), wall_clock);
    });
  });
  m.def("sweep", [](const std::string& path, const Text& text, const Overrides& sets,
                    const std::vector<int>& gpus, bool wall_clock) {
    return call([&] { return tilesim::sweep_document({path, text, sets}, gpus, wall_clock); });
  });
  m.def("compare", [](const std::string& path, const Text& text, const Overrides& sets,
                      const std::string& schedules, bool wall_clock) {
    return call([&] {
      return tilesim::compare_document({path, text, sets}, schedules, wall_clock);
    });
  });
  m.def("tune", [](const std::string& path, const Text& text, const Overrides& sets, int top,
                   bool wall_clock) {
    return call([&] { return tilesim::tune_document({path, text, sets}, top, wall_clock); });
  });
  m.def("plan", [](const std::string& path, const Text& text, const Overrides& sets, bool ops) {
    return call([&] { return tilesim::plan_document({path, text, sets}, ops); });
  });
  m.def("report", [](const std::string& path, const Text& text, const Overrides& sets,
                     const std::vector<int>& gpus, const std::string& schedules) {
    return call([&] {
      tilesim::ReportOptions options;
      options.gpus = gpus;
      options.schedules = schedules;
      return nlohmann::ordered_json(tilesim::report_html({path, text, sets}, options));
    });
  });
}
