#include "runtime/calibration/calibrate_command.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "runtime/calibration/calibration_comm.hpp"
#include "runtime/calibration/calibration_kernels.hpp"
#include "runtime/calibration/calibration_probes.hpp"
#include "runtime/cpu/cpu_backend.hpp"
#if TILESIM_HAVE_CUDA
#include "runtime/calibration/calibration_cuda.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/cuda/cuda_rank_setup.hpp"
#endif
#include "runtime/mpi/mpi_session.hpp"
#include "sim/calibration/compute_fit.hpp"
#include "sim/calibration/link_fit.hpp"
#include "sim/calibration/profile_writer.hpp"
#include "sim/calibration/run_fit.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/input_error.hpp"
#include "sim/model/calibration_profile.hpp"

namespace tilesim::runtime {
namespace {

constexpr int kOk = 0;
constexpr int kBadInput = 2;

KernelBenchOptions kernel_options(const CalibrateOptions& options) {
  KernelBenchOptions k;
  k.heads = options.heads;
  k.kv_heads = options.heads;
  k.head_dims = options.head_dims;
  if (options.quick) {
    k.tokens = {128, 256, 512, 1024};
    k.repeats = 4;
    k.min_seconds = 0.02;
  } else {
    k.tokens = {64, 128, 256, 512, 1024, 2048};
    k.repeats = 10;
    k.min_seconds = 0.2;
  }
  return k;
}

std::vector<double> message_sizes(bool quick) {
  std::vector<double> sizes;
  const double largest = quick ? 4.0 * (1 << 20) : 8.0 * (1 << 20);
  for (double b = quick ? 16.0 * 1024 : 4096.0; b <= largest; b *= quick ? 4.0 : 2.0) {
    sizes.push_back(b);
  }
  return sizes;
}

void print_compute_fit(const std::vector<calibration::BlockTiming>& timings,
                       const calibration::ComputeFit& fit) {
  fmt::print("compute: peak {:.3f} GFLOP/s per rank, launch overhead {:.1f} us\n",
             fit.peak_flops / 1e9, fit.launch_overhead_s * 1e6);
  fmt::print("  {:>4} {:>4} {:>6} {:>7} {:>12} {:>10} {:>9}\n", "pass", "d", "tokens", "mask",
             "measured", "GFLOP/s", "residual");
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const auto& t = timings[i];
    fmt::print("  {:>4} {:>4} {:>6.0f} {:>7} {:>10.3f}ms {:>10.3f} {:>8.2f}%\n", to_string(t.pass),
               t.head_dim, t.tokens, t.causal ? "causal" : "full", t.seconds * 1e3,
               t.flops / t.seconds / 1e9, 100.0 * fit.relative_residuals[i]);
  }
}

void print_link_fit(const std::vector<calibration::MessageTiming>& timings,
                    const calibration::LinkFit& fit) {
  fmt::print(
      "shared memory (class nvlink): alpha {:.2f} us, beta {:.3f} GB/s (t = alpha + B/beta)\n",
      fit.alpha_s * 1e6, fit.beta_bytes_per_s / 1e9);
  fmt::print("  {:>12} {:>12} {:>12} {:>9}\n", "bytes", "measured", "fitted", "residual");
  for (std::size_t i = 0; i < timings.size(); ++i) {
    fmt::print("  {:>12.0f} {:>10.1f}us {:>10.1f}us {:>8.2f}%\n", timings[i].bytes,
               timings[i].seconds * 1e6, fit.line.at(timings[i].bytes) * 1e6,
               100.0 * fit.line.relative_residuals[i]);
  }
  fmt::print("  max |residual| {:.2f}%\n", 100.0 * fit.line.max_abs_relative_residual());
}

CalibrationProfile build_profile(const calibration::ComputeFit& compute, double merge_bytes_per_s) {
  CalibrationProfile p;
  p.gpu = "CPU-host";
  p.peak_flops = compute.peak_flops;
  p.launch_overhead_s = compute.launch_overhead_s;
  p.merge_bytes_per_s = merge_bytes_per_s;
  p.causal_efficiency = compute.causal_efficiency;
  p.forward = compute.forward;
  p.backward = compute.backward;
  return p;
}

// What two or more ranks measure beyond compute: the one link class they talk over, the
// host's shared cores and the slowdown of compute under communication.
void set_measured_links(CalibrationProfile& p, double comm_slowdown, double cores,
                        const calibration::LinkFit& link) {
  p.comm_slowdown = comm_slowdown;
  p.compute_cores = cores;
  LinkCost& shm = p.links[static_cast<std::size_t>(LinkClass::nvlink)];
  shm.defined = true;
  shm.efficiency = 1.0;
  shm.alpha_s = link.alpha_s;
  shm.flow_cap_bytes_per_s = link.beta_bytes_per_s;
}

// Probe chunk sizes (tokens per rank) between the loop's sizes, so the fit is not tested on
// the sizes it saw. A ring of P ranks gives P x P compute ops per size; one rank gives one,
// so it probes more sizes (two points would fit any line exactly, noise included).
std::vector<std::int64_t> probe_chunks(bool quick, int ranks) {
  if (ranks == 1) {
    return quick ? std::vector<std::int64_t>{256, 384, 512, 768}
                 : std::vector<std::int64_t>{256, 384, 512, 768, 1024, 1536};
  }
  return quick ? std::vector<std::int64_t>{384, 768} : std::vector<std::int64_t>{384, 768, 1536};
}

#if TILESIM_HAVE_CUDA
// GPU probe sizes: only a CUDA build probes a GPU (elsewhere clang reports the function unused).
std::vector<std::int64_t> cuda_probe_chunks(bool quick, int ranks) {
  if (ranks == 1) {
    return quick ? std::vector<std::int64_t>{2048, 4096, 8192, 16384}
                 : std::vector<std::int64_t>{1024, 2048, 4096, 8192, 12288, 16384};
  }
  return quick ? std::vector<std::int64_t>{2048, 8192}
               : std::vector<std::int64_t>{2048, 4096, 8192, 16384};
}
#endif

void print_run_fit(const calibration::RunFit& fit, const CalibrationProfile& profile,
                   const std::vector<calibration::MeasuredRun>& probes) {
  fmt::print(
      "runs through the executor: compute op = {:.3f} x kernel + {:.1f} us (peak {:.3f} GFLOP/s, "
      "max |residual| {:.2f}%)\n",
      fit.compute.slope, profile.launch_overhead_s * 1e6, profile.peak_flops / 1e9,
      100.0 * fit.compute.max_abs_relative_residual());
  fmt::print("  {:>6} {:>4} {:>3} {:>12} {:>8} {:>12} {:>7}\n", "tokens", "rank", "op",
             "model kernel", "stretch", "measured", "scale");
  for (std::size_t i = 0; i < fit.compute_samples.size(); ++i) {
    const calibration::ComputeSample& c = fit.compute_samples[i];
    const calibration::Sample point = calibration::compute_point(c, profile.launch_overhead_s);
    const double scale = point.x > 0.0 ? point.y / point.x : 0.0;
    fmt::print("  {:>6} {:>4} {:>3} {:>10.1f}us {:>8.3f} {:>10.1f}us {:>7.3f}\n",
               probes[c.run].plan.shape.seq_len / probes[c.run].plan.ranks, c.rank, c.op,
               c.kernel_s * 1e6, c.stretch, c.seconds * 1e6, scale);
  }
  for (const calibration::Sample& s : fit.transfer_samples) {
    fmt::print("  transfer {:>10.0f} B in {:>9.1f} us\n", s.x, s.y * 1e6);
  }
  if (fit.has_transfers) {
    fmt::print(
        "  transfers: median excess over the ping-pong bandwidth {:.1f} us; alpha {:.1f} us\n",
        fit.transfer_alpha_s * 1e6, profile.link(LinkClass::nvlink).alpha_s * 1e6);
  }
}

// Everything calibrate measures before fitting (valid on rank 0).
struct Measurements {
  std::vector<calibration::BlockTiming> blocks;
  double launch_s = 0.0;
  double merge_bytes_per_s = 0.0;
  std::vector<calibration::MessageTiming> messages;
  double cores = 0.0;  // 0: one compute unit per rank (GPUs)
  double slowdown = 0.0;
  std::vector<calibration::MeasuredRun> probes;
};

// Reports measurement stages to options.progress, on rank 0 only.
class StageProgress {
 public:
  StageProgress(const MpiSession& mpi, const CalibrateOptions& options, std::size_t total)
      : report_(mpi.rank() == 0 ? options.progress : nullptr), total_(total) {}
  void done() {
    if (report_) report_(++done_, total_);
  }

 private:
  std::function<void(std::size_t, std::size_t)> report_;
  std::size_t done_ = 0;
  std::size_t total_;
};

Measurements measure_cpu(const MpiSession& mpi, const CalibrateOptions& options) {
  const KernelBenchOptions kernels = kernel_options(options);
  StageProgress stage(mpi, options, mpi.size() > 1 ? 5 : 2);
  Measurements m;
  if (mpi.rank() == 0) {
    m.launch_s = time_launch_overhead_s();
    m.blocks = time_block_kernels(kernels);
    m.merge_bytes_per_s = time_merge_bytes_per_s(kernels);
  }
  quiet_barrier(mpi);
  stage.done();
  if (mpi.size() > 1) {  // one rank has no peer to talk to or share cores with
    m.messages = time_ping_pong(mpi, message_sizes(options.quick), options.quick ? 5 : 15);
    stage.done();
    // Probe with blocks as large as the runs' (beyond the per-core caches).
    const std::int64_t probe_tokens = options.quick ? 1024 : 2048;
    m.cores = measure_shared_cores(mpi, kernels, probe_tokens);
    stage.done();
    m.slowdown =
        measure_comm_slowdown(mpi, kernels, probe_tokens, options.quick ? 1 << 20 : 4 << 20);
    stage.done();
  }
  m.probes = run_probes(
      mpi, kernels, probe_chunks(options.quick, mpi.size()), options.quick ? 2 : 3,
      InputPrecision::fp32, [&](const Plan& plan, const InputData& inputs) {
        return std::unique_ptr<Backend>(new CpuBackend(plan, mpi.rank(), inputs, mpi.comm(), 1));
      });
  stage.done();
  return m;
}

#if TILESIM_HAVE_CUDA
using tk_family = kernels::KernelFamily;

// GPU blocks: 32 heads and head_dim 64 and 128 unless asked otherwise, 512 to 16K tokens.
KernelBenchOptions cuda_kernel_options(const CalibrateOptions& options) {
  KernelBenchOptions k;
  const CalibrateOptions defaults;
  k.heads = options.heads == defaults.heads ? 32 : options.heads;
  k.kv_heads = k.heads;
  k.head_dims =
      options.head_dims == defaults.head_dims ? std::vector<int>{64, 128} : options.head_dims;
  k.tokens = options.quick ? std::vector<std::int64_t>{1024, 4096, 16384}
                           : std::vector<std::int64_t>{512, 1024, 2048, 4096, 8192, 16384};
  k.repeats = options.quick ? 3 : 8;
  return k;
}

Measurements measure_cuda(const MpiSession& mpi, const CalibrateOptions& options) {
  std::string why;
  const bool usable = select_local_gpu(mpi, why);
  if (!mpi.all_true(usable)) {
    throw std::runtime_error(usable ? "another rank has no usable GPU" : "no usable GPU: " + why);
  }
  const KernelBenchOptions kernels = cuda_kernel_options(options);
  const tk_family family = options.kernels == "cudnn" ? tk_family::cudnn : tk_family::own;
  StageProgress stage(mpi, options, mpi.size() > 1 ? 3 : 2);
  Measurements m;
  if (mpi.rank() == 0) {
    m.launch_s = time_cuda_launch_overhead_s();
    m.blocks = time_cuda_block_kernels(kernels, family);
    m.merge_bytes_per_s = time_cuda_merge_bytes_per_s(kernels);
  }
  quiet_barrier(mpi);
  stage.done();
  if (mpi.size() > 1) {
    std::vector<double> sizes;
    for (double b = 64.0 * 1024; b <= (options.quick ? 64.0 : 256.0) * (1 << 20); b *= 4.0) {
      sizes.push_back(b);
    }
    m.messages = time_nccl_ping_pong(mpi, sizes, options.quick ? 5 : 20);
    m.slowdown = measure_cuda_comm_slowdown(mpi, kernels, family, 4096, 64.0 * (1 << 20));
    stage.done();
  }
  KernelBenchOptions probe = kernels;
  probe.head_dims = {kernels.head_dims.back()};
  m.probes =
      run_probes(mpi, probe, cuda_probe_chunks(options.quick, mpi.size()), options.quick ? 2 : 3,
                 InputPrecision::bf16, [&](const Plan& plan, const InputData& inputs) {
                   return std::unique_ptr<Backend>(new CudaBackend(plan, mpi, inputs, family));
                 });
  stage.done();
  return m;
}
#endif

}  // namespace

int calibrate_command(const CalibrateOptions& options) {
  MpiSession mpi;
  if (options.ranks > 0 && options.ranks != mpi.size()) {
    if (mpi.rank() == 0) {
      fmt::print(stderr,
                 "error: --ranks: asked for {} ranks but this job has {}; launch with "
                 "mpirun -np {} tilesim calibrate ...\n",
                 options.ranks, mpi.size(), options.ranks);
    }
    return kBadInput;
  }
  const bool one_rank = mpi.size() == 1;
  if (one_rank == options.links_from.empty()) {
    if (mpi.rank() == 0) {
      fmt::print(stderr, "{}",
                 one_rank ? "error: --links-from: one rank measures no link; name the profile "
                            "whose links to copy (e.g. --links-from topologies/h200.calib.yaml), "
                            "or launch with mpirun -np 2 or more\n"
                          : "error: --links-from: only a one-rank calibration copies links; with "
                            "more ranks calibrate measures them\n");
    }
    return kBadInput;
  }
  // Read before measuring, so that a bad file fails at once (InputError: exit 2).
  CalibrationProfile links_source;
  if (one_rank) {
    try {
      links_source = load_calibration(options.links_from);
    } catch (const InputError& e) {
      fmt::print(stderr, "error: --links-from: {}\n", e.what());
      return kBadInput;
    }
  }
  const bool cuda = options.backend == "cuda";
  Measurements m;
  try {
    if (cuda) {
#if TILESIM_HAVE_CUDA
      m = measure_cuda(mpi, options);
#else
      if (mpi.rank() == 0) {
        fmt::print(stderr,
                   "error: --backend cuda: this tilesim was built without CUDA and NCCL "
                   "(TILESIM_CUDA=OFF, or nvcc or NCCL not found)\n");
      }
      return kBadInput;
#endif
    } else {
      m = measure_cpu(mpi, options);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "tilesim calibrate: rank {}: {}\n", mpi.rank(), e.what());
    std::fflush(stderr);
    mpi.abort(1);
  }
  if (mpi.rank() != 0) return mpi.broadcast(kOk);

  calibration::ComputeFit compute;
  calibration::LinkFit link;
  try {
    compute = calibration::fit_compute(m.blocks, m.launch_s);
    if (!one_rank) link = calibration::fit_link(m.messages);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "tilesim calibrate: the measurements cannot be fitted: {}\n", e.what());
    return mpi.broadcast(1);
  }
  print_compute_fit(m.blocks, compute);
  fmt::print("merge: {:.3f} GB/s\n", m.merge_bytes_per_s / 1e9);
  CalibrationProfile profile = build_profile(compute, m.merge_bytes_per_s);
  if (one_rank) {
    profile.links = links_source.links;
    profile.comm_slowdown = links_source.comm_slowdown;
    profile.compute_cores = links_source.compute_cores;
    fmt::print("links, comm_slowdown and cores: copied from {} (one rank measures none)\n",
               options.links_from);
  } else {
    print_link_fit(m.messages, link);
    fmt::print("shared cores: {:.3f} (of {} ranks); compute slowdown under communication {:.3f}\n",
               m.cores, mpi.size(), m.slowdown);
    set_measured_links(profile, m.slowdown, m.cores, link);
  }
  if (cuda) profile.gpu = "measured GPU";
  try {
    const calibration::RunFit run_fit = calibration::fit_runs(m.probes, profile, LinkClass::nvlink);
    profile = calibration::apply_run_fit(profile, run_fit, LinkClass::nvlink);
    print_run_fit(run_fit, profile, m.probes);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "tilesim calibrate: the probe runs cannot be fitted: {}\n", e.what());
    return mpi.broadcast(1);
  }
  const std::string where =
      one_rank ? fmt::format(
                     "One rank: compute only. links, comm_slowdown and cores are not\n"
                     "measured: copied from {}.\n",
                     options.links_from)
      : cuda ? "GPUs of one node talk over NCCL, written as class nvlink (flow_cap = fitted\n"
               "beta); pcie/upi/ib repeat it (not measured: calibrate one node at a time).\n"
             : "Ranks talk through shared memory, written as class nvlink (flow_cap = fitted\n"
               "beta); pcie/upi/ib repeat it (a single host has none). cores = shared compute.\n";
  std::ostringstream text;
  calibration::write_profile(
      text, profile,
      fmt::format(
          "Measured by `tilesim calibrate --backend {}{}{}` with {} MPI rank{} on this host.\n"
          "{}{}",
          options.backend, cuda ? " --kernels " + options.kernels : std::string(),
          options.quick ? " --quick" : "", mpi.size(), one_rank ? "" : "s", where,
          one_rank ? "peak is refitted from probe runs through the executor (compute op\n"
                     "times); launch_overhead is an empty task's round trip."
                   : "peak and alpha are refitted from probe runs through the executor\n"
                     "(compute op times over their measured core sharing; the median in-run\n"
                     "message latency); launch_overhead is an empty task's round trip."),
      LinkClass::nvlink);
  // Whole or not at all (sim/core/atomic_file.hpp): an interrupted or failed write keeps the
  // previous profile.
  try {
    AtomicFile out(options.out, "--out");
    out.stream() << text.str();
    out.commit();
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return mpi.broadcast(kBadInput);
  }
  fmt::print("wrote {}\n", options.out);
  std::fflush(stdout);
  return mpi.broadcast(kOk);
}

}  // namespace tilesim::runtime
