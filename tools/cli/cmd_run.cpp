// tilesim run SCENARIO --backend cpu|cuda [--kernels cudnn|own] [--check] [--json] [--trace
// out.json] [--seed N]
//                      [--timeout 60s] [--threads N] [--set k=v]...
// Launch with `mpirun -np <schedule.gpus> tilesim run ...` (one rank per plan rank). Failure
// injection for tests: TILESIM_FAIL_RANK=r TILESIM_FAIL_OP=i
// [TILESIM_FAIL_MODE=error|hang|kill|exit|no_recv|nan] (runtime/executor/executor.hpp)
// make rank r fail (or hang) when it reaches op i of its program.
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "runtime/executor/kernel_choice.hpp"
#include "runtime/mpi/run_command.hpp"
#include "sim/core/units.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"

namespace tilesim::cli {
namespace {

struct RunArgs {
  ScenarioArgs scenario;
  std::string backend = "cpu";
  std::string kernels;  // "" = the default for the backend
  bool check = false;
  std::string trace;
  std::uint64_t seed = 1;
  std::string timeout = "60s";
  int threads = 1;
};

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0') throw std::invalid_argument(fmt::format("{}={} is not an integer", name, text));
  return static_cast<int>(value);
}

runtime::FailureInjection failure_from_env() {
  runtime::FailureInjection fail;
  fail.rank = env_int("TILESIM_FAIL_RANK", -1);
  fail.op = env_int("TILESIM_FAIL_OP", 0);
  const char* mode = std::getenv("TILESIM_FAIL_MODE");
  const std::string m = mode == nullptr ? "error" : mode;
  using Mode = runtime::FailureInjection::Mode;
  const std::pair<const char*, Mode> modes[] = {{"error", Mode::error},     {"hang", Mode::hang},
                                                {"kill", Mode::kill},       {"exit", Mode::exit},
                                                {"no_recv", Mode::no_recv}, {"nan", Mode::nan}};
  for (const auto& [name, value] : modes) {
    if (m == name) {
      fail.mode = value;
      return fail;
    }
  }
  throw std::invalid_argument(
      "TILESIM_FAIL_MODE must be error, hang, kill, exit, no_recv or nan, got " + m);
}

int run_run(const RunArgs& args) {
  const auto timeout_s = parse_time_s(args.timeout);
  if (!timeout_s || *timeout_s <= 0) {
    fmt::print(stderr, "error: --timeout {}: expected a positive time such as 60s or 500ms\n",
               args.timeout);
    return kExitBadInput;
  }
  runtime::RunOptions options;
  try {
    options.kernels = runtime::resolve_kernels(args.backend, args.kernels);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitBadInput;
  }
  options.scenario = args.scenario.path;
  options.sets = args.scenario.sets;
  options.json = args.scenario.json;
  options.backend = args.backend;
  options.check = args.check;
  options.trace = args.trace;
  options.seed = args.seed;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*timeout_s * 1000.0));
  options.threads = args.threads;
  options.fail = failure_from_env();
  return runtime::run_command(options);
}

}  // namespace

void add_run(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* verb = app.add_subcommand(
      "run", "Execute a scenario's plan on real ranks (mpirun -np <gpus>) and time every op");
  add_scenario_options(*verb, args->scenario);
  verb->add_option("--backend", args->backend, "cpu (MPI + CPU kernels) or cuda (NCCL + GPUs)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  verb->add_option("--kernels", args->kernels,
                   "cuda backend: cudnn (cuDNN fused attention; the default where built) or own "
                   "(the project's CUDA kernels, the reference)")
      ->check(CLI::IsMember({"cudnn", "own"}));
  verb->add_flag("--check", args->check,
                 "Compare every output chunk with the reference attention; fail above tolerance");
  verb->add_option("--trace", args->trace, "Write a Chrome trace of the measured run")
      ->check(output_file_check());
  // Checked as text: CLI11 would read -1 into the unsigned seed as 2^64 - 1.
  verb->add_option("--seed", args->seed, "Seed of the generated inputs (0 to 10^19 - 1)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const bool digits = !text.empty() && text.size() <= 19 &&
                                text.find_first_not_of("0123456789") == std::string::npos;
            return digits ? std::string() : "expected a non-negative integer below 10^19";
          },
          "SEED"));
  verb->add_option("--timeout", args->timeout,
                   "A rank that makes no progress for this long fails the job (e.g. 60s)");
  verb->add_option("--threads", args->threads, "CPU kernel threads per rank (cpu backend)")
      ->check(CLI::Range(1, 1024));
  verb->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_run(*args); }); });
}

}  // namespace tilesim::cli
