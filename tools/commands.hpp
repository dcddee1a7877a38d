// The CLI verbs. Each registers a CLI11 subcommand whose callback stores the
// verb's exit code (see cli_errors.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace tilesim::cli {

// Options shared by every verb that reads a scenario.
struct ScenarioArgs {
  std::string path;
  std::vector<std::string> sets;  // --set key.path=value
  bool json = false;
};
void add_scenario_options(CLI::App& verb, ScenarioArgs& args);

void add_topo(CLI::App& app, int& exit_code);
void add_plan(CLI::App& app, int& exit_code);
void add_simulate(CLI::App& app, int& exit_code);
void add_sweep(CLI::App& app, int& exit_code);
void add_compare(CLI::App& app, int& exit_code);
void add_tune(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);
void add_calibrate(CLI::App& app, int& exit_code);
void add_validate(CLI::App& app, int& exit_code);
void add_regress(CLI::App& app, int& exit_code);

}  // namespace tilesim::cli
