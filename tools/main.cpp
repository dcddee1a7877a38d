// tilesim: predict (simulate) and measure distributed attention schedules.
#include <CLI/CLI.hpp>

#include "tools/cli_errors.hpp"
#include "tools/commands.hpp"

namespace tilesim::cli {

void add_scenario_options(CLI::App& verb, ScenarioArgs& args) {
  verb.add_option("scenario", args.path, "Scenario YAML file")->required();
  verb.add_option("--set", args.sets,
                  "Override a scenario field, value parsed as YAML (repeatable), "
                  "e.g. --set attention.seq_len=1M");
  verb.add_flag("--json", args.json, "Print one JSON document instead of tables");
}

}  // namespace tilesim::cli

int main(int argc, char** argv) {
  using namespace tilesim::cli;
  CLI::App app{"tilesim: simulate and compare distributed attention schedules on GPU clusters"};
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_topo(app, exit_code);
  add_plan(app, exit_code);
  add_simulate(app, exit_code);
  add_sweep(app, exit_code);
  add_compare(app, exit_code);
  add_tune(app, exit_code);
  add_run(app, exit_code);
  add_calibrate(app, exit_code);
  add_validate(app, exit_code);
  add_regress(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  return exit_code;
}
