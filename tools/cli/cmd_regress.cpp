// tilesim regress DIR [--update] [--json]
// Simulates every cost-model regression case in DIR (sim/calibration/regress_case.hpp) and
// fails (exit 1) when a prediction left its tolerance, printing expected, got and the relative
// change of each figure that moved. --update rewrites the expectations instead.
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <vector>

#include "sim/core/atomic_file.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/validation/regress_case.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"

namespace tilesim::cli {
namespace {

struct RegressArgs {
  std::string directory;
  bool update = false;
};

int run_regress(const RegressArgs& args) {
  const InterruptGuard interrupts;
  int failed = 0, count = 0;
  // Every case is loaded and simulated before --update writes any, and the rewrites are
  // committed together, so that a bad case, a full disk or an interrupt leaves the directory
  // as it was instead of half rewritten.
  std::vector<validation::RegressCase> cases;
  std::vector<bool> passes;
  for (const std::string& file : validation::regress_case_files(args.directory)) {
    throw_if_interrupted();
    cases.push_back(validation::load_regress_case(file));
    passes.push_back(validation::run_regress_case(cases.back()));
  }
  if (args.update) {
    AtomicFileSet files;
    for (const validation::RegressCase& c : cases) {
      validation::write_regress_case(files.add(c.file, "").stream(), c);
    }
    files.commit_all();
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    validation::RegressCase& c = cases[k];
    const std::string& file = c.file;
    const bool passed = passes[k];
    ++count;
    if (args.update) {
      fmt::print("updated {}\n", file);
      continue;
    }
    fmt::print("{} {}\n", passed ? "ok  " : "FAIL", file);
    if (passed) continue;
    ++failed;
    for (const auto& fig : c.figures) {
      const bool moved = std::abs(fig.got - fig.expected) > c.tolerance * std::abs(fig.expected);
      fmt::print("     {:<22} expected {:<16.10g} got {:<16.10g} change {:+.4f}%{}\n", fig.name,
                 fig.expected, fig.got, 100.0 * fig.rel_change(),
                 moved ? fmt::format("  (tolerance {:g})", c.tolerance) : "");
    }
  }
  if (args.update) {
    fmt::print("{} case(s) rewritten\n", count);
    return kExitOk;
  }
  fmt::print("{} of {} case(s) passed\n", count - failed, count);
  if (failed > 0) {
    fmt::print(stderr,
               "tilesim regress: {} case(s) moved; if the cost-model change is deliberate, run "
               "`tilesim regress {} --update`\n",
               failed, args.directory);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void add_regress(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RegressArgs>();
  CLI::App* verb = app.add_subcommand(
      "regress", "Check the simulator's predictions against the regression cases of a directory");
  verb->add_option("directory", args->directory, "Directory of case YAML files (tests/regress/)")
      ->required();
  verb->add_flag("--update", args->update, "Rewrite every case's expectations with today's values");
  verb->callback(
      [args, &exit_code] { exit_code = run_guarded([&] { return run_regress(*args); }); });
}

}  // namespace tilesim::cli
