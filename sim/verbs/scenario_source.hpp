// Where a verb's scenario comes from: a YAML file, or YAML/JSON text (the Python package's
// dicts) read as if it were the file `path` (relative paths resolve from its directory, errors
// name it), with the --set overrides applied in order, and the plan size limits the verb
// refuses past (sim/scenario/resource_guard.hpp; the default is half of this machine's memory).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/scenario/scenario.hpp"

namespace tilesim {

struct ScenarioSource {
  std::string path;
  std::optional<std::string> text;     // when set, the document itself; `path` names it
  std::vector<std::string> overrides;  // "key.path=value"
  ResourceLimits limits;

  // A copy with one more override ("schedule.gpus=16").
  ScenarioSource with(const std::string& override_text) const;
};

// The scenario with source.limits in scenario.limits.
Scenario load_scenario(const ScenarioSource& source);
PreparedScenario prepare_scenario(const ScenarioSource& source);

}  // namespace tilesim
