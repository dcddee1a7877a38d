// The CLI verbs. Each registers a CLI11 subcommand whose callback stores the
// verb's exit code (see cli_errors.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "sim/scenario/resource_guard.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim::cli {

// Options shared by every verb that reads a scenario.
struct ScenarioArgs {
  std::string path;
  std::vector<std::string> sets;  // --set key.path=value
  bool json = false;
  bool no_wall_clock = false;  // report sim_wall_s as 0: byte-identical JSON across runs
  std::string max_memory;      // --max-memory, e.g. 8G ("" = half of this machine's memory)
  double max_ops = 0.0;        // --max-ops (0 = no limit)
  bool quiet = false;          // no progress on stderr (progress.hpp)
};
void add_scenario_options(CLI::App& verb, ScenarioArgs& args);
// --max-memory and --max-ops alone (add_scenario_options includes them).
void add_resource_options(CLI::App& verb, ScenarioArgs& args);
ScenarioSource source_of(const ScenarioArgs& args);
// --no-wall-clock, for verbs whose JSON reports simulator wall time.
void add_no_wall_clock_option(CLI::App& verb, ScenarioArgs& args);
// The plan size limits of --max-memory and --max-ops (sim/scenario/resource_guard.hpp);
// InputError for a --max-memory that is not a byte size.
ResourceLimits resource_limits(const ScenarioArgs& args);
// --quiet, for verbs that show progress on a terminal.
void add_quiet_option(CLI::App& verb, bool& quiet);

// A CLI11 check for a file the verb will write: a non-empty path, not a directory, in a
// directory that exists; so that a bad path fails before the work, not after it.
CLI::Validator output_file_check();
// --gpus N,N,...: every comma-separated entry a count from 1 to 2^20 (an empty entry, as in
// 8,,16, is an error, not skipped).
CLI::Option* add_gpu_counts_option(CLI::App& verb, std::vector<int>& counts,
                                   const std::string& help);

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
void add_report(CLI::App& app, int& exit_code);

}  // namespace tilesim::cli
