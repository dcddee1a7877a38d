// The `tilesim run` verb's work: execute a scenario's plan on the MPI ranks of this job.
//
// Every rank loads the scenario and builds the same validated plan; the MPI world size must
// equal schedule.gpus. Each rank regenerates its inputs from the seed, runs its program on the
// backend, then rank 0 gathers the per-op timings into the result JSON / Chrome trace format of
// `simulate`. With `check`, every rank compares the outputs it owns against the reference
// (runtime/numerics_check.hpp) and rank 0 prints the worst errors; the job fails above the
// tolerance (cpu, fp32 data: 1e-5 absolute for O/LSE, 1e-4 for dQ/dKV; cuda, bf16 inputs:
// 2e-2 absolute; runtime/check_report.hpp).
// A failing rank prints "tilesim run: rank R failed at rank R op I: ...: why" and aborts the
// whole job (MPI_Abort), so no rank is left waiting.
// Exit codes: 0 ok, 1 run failure or check above tolerance, 2 bad input.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/executor/executor.hpp"

namespace tilesim::runtime {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string backend = "cpu";
  std::string kernels = "own";  // cuda backend: "cudnn" or "own" (runtime/executor/kernel_choice)
  bool check = false;
  bool json = false;
  std::string trace;
  std::uint64_t seed = 1;
  std::chrono::milliseconds timeout{60'000};
  int threads = 1;  // CPU kernel threads per rank
  FailureInjection fail;
};

// True where this build has the MPI runtime.
bool runtime_available();

int run_command(const RunOptions& options);

}  // namespace tilesim::runtime
