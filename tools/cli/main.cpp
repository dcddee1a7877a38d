// tilesim: predict (simulate) and measure distributed attention schedules.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"

namespace tilesim::cli {

void add_scenario_options(CLI::App& verb, ScenarioArgs& args) {
  verb.add_option("scenario", args.path, "Scenario YAML file")->required();
  verb.add_option("--set", args.sets,
                  "Override a scenario field, value parsed as YAML (repeatable), "
                  "e.g. --set attention.seq_len=1M");
  verb.add_flag("--json", args.json, "Print one JSON document instead of tables");
  add_resource_options(verb, args);
}

void add_resource_options(CLI::App& verb, ScenarioArgs& args) {
  verb.add_option("--max-memory", args.max_memory,
                  "Refuse a plan estimated to need more memory than this (default: half of "
                  "this machine's), e.g. 8GB or 8GiB");
  verb.add_option("--max-ops", args.max_ops, "Refuse a plan estimated to have more ops")
      ->check(CLI::NonNegativeNumber);
}

ResourceLimits resource_limits(const ScenarioArgs& args) {
  ResourceLimits limits;
  limits.max_ops = args.max_ops;
  if (!args.max_memory.empty()) {
    const auto bytes = parse_bytes(args.max_memory);
    if (!bytes || !(*bytes > 0)) {
      throw InputError("command line", 0, "--max-memory",
                       "a positive byte size such as 8GB or 512MiB, got '" + args.max_memory + "'");
    }
    limits.max_memory_bytes = *bytes;
  }
  return limits;
}

void add_no_wall_clock_option(CLI::App& verb, ScenarioArgs& args) {
  verb.add_flag("--no-wall-clock", args.no_wall_clock,
                "Report sim_wall_s as 0 so that the JSON is byte-identical across runs");
}

void add_quiet_option(CLI::App& verb, bool& quiet) {
  verb.add_flag("--quiet", quiet, "No progress on stderr (shown only when stderr is a terminal)");
}

ScenarioSource source_of(const ScenarioArgs& args) {
  return {args.path, std::nullopt, args.sets, resource_limits(args)};
}

CLI::Validator output_file_check() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path.empty()) return "expected a file name, got an empty one";
        const std::filesystem::path p(path);
        std::error_code ec;
        if (std::filesystem::is_directory(p, ec)) return path + " is a directory; expected a file";
        const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
        if (!std::filesystem::is_directory(dir, ec)) {
          return "directory " + dir.string() + " does not exist";
        }
        if (::access(dir.c_str(), W_OK) != 0)
          return "directory " + dir.string() + " is not writable";
        return {};
      },
      "FILE", "output file");
}

namespace {

// Entry i of a comma-separated list, or the reason the list is not one of GPU counts.
std::string gpu_count_error(const std::string& list, std::vector<int>* counts) {
  std::size_t begin = 0;
  for (int entry = 1;; ++entry) {
    const std::size_t end = std::min(list.find(',', begin), list.size());
    const std::string item = list.substr(begin, end - begin);
    const bool digits =
        !item.empty() && item.size() <= 8 &&
        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    const long value = digits ? std::stol(item) : 0;
    if (value < 1 || value > (1 << 20)) {
      return fmt::format(
          "expected GPU counts from 1 to {} separated by commas (e.g. 8,16,32); entry {} is {}",
          1 << 20, entry, item.empty() ? std::string("empty") : "'" + item + "'");
    }
    if (counts != nullptr) counts->push_back(static_cast<int>(value));
    if (end == list.size()) return {};
    begin = end + 1;
  }
}

}  // namespace

CLI::Option* add_gpu_counts_option(CLI::App& verb, std::vector<int>& counts,
                                   const std::string& help) {
  return verb
      .add_option_function<std::string>(
          "--gpus",
          [&counts](const std::string& list) {
            counts.clear();
            (void)gpu_count_error(list, &counts);
          },
          help)
      ->check(CLI::Validator([](std::string& list) { return gpu_count_error(list, nullptr); },
                             "N,N,...", "GPU counts"));
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
  add_report(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  return exit_code;
}
