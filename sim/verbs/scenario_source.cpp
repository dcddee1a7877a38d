#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

ScenarioSource ScenarioSource::with(const std::string& override_text) const {
  ScenarioSource copy = *this;
  copy.overrides.push_back(override_text);
  return copy;
}

Scenario load_scenario(const ScenarioSource& source) {
  Scenario s = source.text ? load_scenario_text(*source.text, source.path, source.overrides)
                           : load_scenario(source.path, source.overrides);
  s.limits = source.limits;
  return s;
}

PreparedScenario prepare_scenario(const ScenarioSource& source) {
  return prepare_scenario(load_scenario(source), source.limits);
}

}  // namespace tilesim
