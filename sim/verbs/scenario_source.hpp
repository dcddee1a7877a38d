// Where a verb's scenario comes from: a YAML file, or YAML/JSON text (the Python package's
// dicts) read as if it were the file `path` (relative paths resolve from its directory, errors
// name it), with the --set overrides applied in order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/scenario.hpp"

namespace tilesim {

struct ScenarioSource {
  std::string path;
  std::optional<std::string> text;     // when set, the document itself; `path` names it
  std::vector<std::string> overrides;  // "key.path=value"

  // A copy with one more override ("schedule.gpus=16").
  ScenarioSource with(const std::string& override_text) const;
};

Scenario load_scenario(const ScenarioSource& source);
PreparedScenario prepare_scenario(const ScenarioSource& source);

}  // namespace tilesim
