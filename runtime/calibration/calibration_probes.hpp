// Probe runs for `tilesim calibrate`: small forward ring plans executed by the real executor and
// cpu backend on every rank, so that the fit of sim/calibration/run_fit.hpp sees compute ops and
// transfers exactly as `tilesim run` produces them.
//
// Each probe is a ring over all ranks with `chunk` tokens per rank (4 heads, the first head
// dimension, fp32, non-causal); it runs `repeats` times and the run with the shortest makespan
// is kept (load from other processes only adds time, as the validation loop keeps the fastest
// of its repeats). Collective; the runs are valid on rank 0.
//
// Each rank's executor times its ops from its own start, after a barrier that ranks sharing
// cores leave milliseconds apart; when all ranks run on one host, the runs are put on one
// clock (the host's steady clock at each rank's start, sim/calibration/run_fit.hpp
// shift_to_one_clock), so that a transfer's send and recv, and the computes of different
// ranks, are compared on the same clock. Ranks on several hosts keep their own starts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/calibration/calibration_kernels.hpp"
#include "runtime/executor/backend.hpp"
#include "runtime/executor/input_data.hpp"
#include "runtime/mpi/mpi_session.hpp"
#include "sim/calibration/run_fit.hpp"

namespace tilesim::runtime {

// Makes this rank's backend for a probe plan.
using ProbeBackendFactory =
    std::function<std::unique_ptr<Backend>(const Plan& plan, const InputData& inputs)>;

std::vector<calibration::MeasuredRun> run_probes(const MpiSession& mpi,
                                                 const KernelBenchOptions& options,
                                                 const std::vector<std::int64_t>& chunk_tokens,
                                                 int repeats, InputPrecision precision,
                                                 const ProbeBackendFactory& backend);

}  // namespace tilesim::runtime
