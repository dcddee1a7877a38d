// The `tilesim calibrate` verb's work: measure this machine's costs and write the calibration
// profile the simulator loads (sim/model/calibration_profile.hpp).
//
// Launched under mpirun with one process per rank: rank 0 times the block kernels
// alone (calibration_kernels.hpp; cuda: calibration_cuda.hpp, on `kernels` cudnn or own, which
// the written header names: a profile describes the kernels it timed), then all ranks run the MPI
// (cuda: NCCL) benchmarks (calibration_comm.hpp) and the probe runs through the executor
// (calibration_probes.hpp, fitted by sim/calibration/run_fit.hpp). The cuda backend has no
// shared cores and its GPUs of one node talk over class nvlink; it has never run on a GPU in
// this project's CI (no GPU there). Fits (sim/calibration/): compute_fit for peak, efficiency
// tables and the causal factor; link_fit for alpha and beta of the one link class a CPU host has.
// Mapping of a CPU host onto the profile: MPI ranks on one host talk through shared memory,
// written as class `nvlink` (the intra-node class) with efficiency 1 and flow_cap = beta (the
// cpu-host topology's link bandwidth is a nominal value above any beta, so one flow runs at
// beta); pcie, upi and ib, which a host does not have, repeat the nvlink values with a comment.
// `cores` = the measured shared compute capacity of the host. Rank 0 prints every fit with
// its residuals. Exit codes: 0 ok, 1 benchmark failure, 2 bad input.
// One rank (a machine with one GPU) measures compute only: kernels, launch, merge and probe
// rings of one rank. Its links, flow caps, comm_slowdown and shared cores, which one rank
// cannot measure, are copied from the profile named by `links_from` (e.g. the datasheet
// profile of that GPU), and the written header says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tilesim::runtime {

struct CalibrateOptions {
  std::string backend = "cpu";
  std::string kernels = "own";  // cuda: "cudnn" or "own" (resolved by the CLI, kernel_choice.hpp)
  std::string out;
  int ranks = 0;           // 0: whatever mpirun started; else must match
  std::string links_from;  // profile whose links a one-rank calibration copies
  bool quick = false;
  int heads = 4;
  std::vector<int> head_dims{64};
  // Called on rank 0 after each measurement stage with (stages done, stages in total).
  std::function<void(std::size_t, std::size_t)> progress;
};

int calibrate_command(const CalibrateOptions& options);

}  // namespace tilesim::runtime
