// tilesim report SCENARIO -o FILE.html [--gpus 8,16,32] [--schedules ring,usp] [--set k=v]...
// Writes sim/report/html_report.hpp's page, whole or not at all (sim/core/atomic_file.hpp);
// SIGINT/SIGTERM stops it and leaves any previous file as it was.
#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/report/html_report.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/progress.hpp"

namespace tilesim::cli {
namespace {

struct ReportArgs {
  ScenarioArgs scenario;
  std::string out;
  ReportOptions options;
};

int run_report(const ReportArgs& args) {
  const InterruptGuard interrupts;
  TerminalProgress progress("report steps", args.scenario.quiet);
  const std::string html =
      report_html(source_of(args.scenario), args.options,
                  [&](std::size_t done, std::size_t total) { progress.update(done, total); });
  AtomicFile out(args.out, "-o");
  out.stream() << html;
  out.commit();
  fmt::print("wrote {} ({} bytes)\n", args.out, html.size());
  return kExitOk;
}

}  // namespace

void add_report(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* verb = app.add_subcommand(
      "report",
      "Write one self-contained HTML page: speedup and efficiency against GPU count, a step's "
      "timeline, link utilisation, peak memory per rank, the compare table");
  verb->add_option("scenario", args->scenario.path, "Scenario YAML file")->required();
  verb->add_option("--set", args->scenario.sets,
                   "Override a scenario field, value parsed as YAML (repeatable)");
  verb->add_option("-o,--out", args->out, "HTML file to write")
      ->required()
      ->check(output_file_check());
  add_gpu_counts_option(*verb, args->options.gpus,
                        "GPU counts of the speedup curves (default: P/4, P/2, P)");
  verb->add_option("--schedules", args->options.schedules,
                   "Schedules to compare, as for compare (default: ring and the scenario's)");
  add_resource_options(*verb, args->scenario);
  add_quiet_option(*verb, args->scenario.quiet);
  verb->callback(
      [args, &exit_code] { exit_code = run_guarded([&] { return run_report(*args); }); });
}

}  // namespace tilesim::cli
