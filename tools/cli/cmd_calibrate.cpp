// tilesim calibrate --backend cpu|cuda [--kernels cudnn|own] --out PROFILE.yaml [--ranks N]
// [--quick] [--heads H]
//                   [--head-dims 64,128] [--links-from PROFILE.yaml]
// Launch with `mpirun -np N tilesim calibrate ...` (cpu: the ranks share this host; cuda: one
// rank per GPU of one node). N = 1 measures compute only and needs --links-from.
#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "runtime/calibration/calibrate_command.hpp"
#include "runtime/executor/kernel_choice.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/progress.hpp"

namespace tilesim::cli {

void add_calibrate(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<runtime::CalibrateOptions>();
  auto kernels = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  CLI::App* verb = app.add_subcommand(
      "calibrate",
      "Measure block kernels, point-to-point transfers and contention on this machine "
      "(mpirun -np N) and write a calibration profile");
  verb->add_option("--backend", args->backend,
                   "cpu (MPI ranks + CPU kernels) or cuda (one rank per GPU: CUDA kernels, "
                   "NCCL; defaults to 32 heads and head dims 64,128)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  verb->add_option("--kernels", *kernels,
                   "cuda backend: cudnn (cuDNN fused attention; the default where built) or own "
                   "(the project's CUDA kernels)")
      ->check(CLI::IsMember({"cudnn", "own"}));
  verb->add_option("--out", args->out, "Calibration profile YAML to write")
      ->required()
      ->check(output_file_check());
  verb->add_option("--ranks", args->ranks, "Expected MPI ranks (checked against mpirun -np)")
      ->check(CLI::Range(1, 4096));
  verb->add_option("--links-from", args->links_from,
                   "One rank: copy links and comm_slowdown from this profile (one rank "
                   "measures no link), e.g. topologies/h200.calib.yaml");
  verb->add_flag("--quick", args->quick, "Fewer sizes and repeats (CI: well under a minute)");
  verb->add_option("--heads", args->heads, "Attention heads of the benchmarked blocks")
      ->check(CLI::Range(1, 256));
  verb->add_option("--head-dims", args->head_dims, "Head dims to benchmark, e.g. 64,128")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  add_quiet_option(*verb, *quiet);
  verb->callback([args, kernels, quiet, &exit_code] {
    try {
      args->kernels = runtime::resolve_kernels(args->backend, *kernels);
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      exit_code = kExitBadInput;
      return;
    }
    TerminalProgress progress("measurement stages", *quiet);
    args->progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
    exit_code = run_guarded([&] { return runtime::calibrate_command(*args); });
    args->progress = nullptr;
  });
}

}  // namespace tilesim::cli
