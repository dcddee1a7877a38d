#include "runtime/calibration/calibration_comm.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <optional>
#include <thread>

#include "runtime/calibration/probe_clock.hpp"
#include "runtime/executor/compute_worker.hpp"
#include "runtime/mpi/start_gate.hpp"

namespace tilesim::runtime {
namespace {

using Clock = ProbeClock;

void wait_polling(MPI_Request& request) {
  int flag = 0;
  while (true) {
    mpi_check(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    if (flag != 0) return;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void send_polling(std::vector<float>& buffer, int peer, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  mpi_check(MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, peer, 7, comm, &r),
            "MPI_Isend");
  wait_polling(r);
}

void recv_polling(std::vector<float>& buffer, int peer, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  mpi_check(MPI_Irecv(buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, peer, 7, comm, &r),
            "MPI_Irecv");
  wait_polling(r);
}

}  // namespace

void quiet_barrier(const MpiSession& mpi) {
  MPI_Request request = MPI_REQUEST_NULL;
  mpi_check(MPI_Ibarrier(mpi.comm(), &request), "MPI_Ibarrier");
  int flag = 0;
  while (true) {
    mpi_check(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    if (flag != 0) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Times `tokens` forward blocks on a ComputeWorker thread while `during` runs on this thread
// until the block is done; returns the block's time.
double block_with(const KernelBenchOptions& options, std::int64_t tokens,
                  const std::function<void(const std::atomic<bool>&)>& during) {
  std::atomic<bool> done{false};
  double seconds = 0.0;
  {
    ComputeWorker worker;
    worker.submit(0, [&] {
      seconds = time_one_forward_block_s(options, tokens);
      done = true;
    });
    during(done);
    std::vector<ComputeWorker::Finished> finished;
    std::optional<ComputeWorker::Error> error;
    while (finished.empty()) {
      worker.take_finished(finished, error);
      if (finished.empty()) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  return seconds;
}

}  // namespace

std::vector<calibration::MessageTiming> time_ping_pong(const MpiSession& mpi,
                                                       const std::vector<double>& sizes_bytes,
                                                       int repeats) {
  std::vector<calibration::MessageTiming> out;
  const MPI_Comm comm = mpi.comm();
  for (double bytes : sizes_bytes) {
    std::vector<float> buffer(static_cast<std::size_t>(bytes / 4.0), 1.0F);
    std::vector<double> one_way;
    quiet_barrier(mpi);
    for (int i = 0; i < repeats + 1; ++i) {
      const auto t0 = Clock::now();
      if (mpi.rank() == 0) {
        send_polling(buffer, 1, comm);
        recv_polling(buffer, 1, comm);
      } else if (mpi.rank() == 1) {
        recv_polling(buffer, 0, comm);
        send_polling(buffer, 0, comm);
      }
      if (i > 0) one_way.push_back(seconds_since(t0) / 2.0);  // the first warms up
    }
    out.push_back({static_cast<double>(buffer.size()) * 4.0, median(one_way)});
  }
  quiet_barrier(mpi);
  return out;
}

double measure_shared_cores(const MpiSession& mpi, const KernelBenchOptions& options,
                            std::int64_t tokens) {
  constexpr int kAloneSamples = 3;
  constexpr int kTogetherSamples = 7;
  time_one_forward_block_s(options, tokens);  // warm up
  double alone = std::numeric_limits<double>::infinity();
  for (int r = 0; r < mpi.size(); ++r) {
    for (int i = 0; i < kAloneSamples; ++i) {
      quiet_barrier(mpi);
      if (mpi.rank() == r) alone = std::min(alone, time_one_forward_block_s(options, tokens));
    }
  }
  // The concurrent samples start at one instant (StartGate): after a barrier ranks sharing
  // cores start up to a scheduler slice apart, and a rank that runs alone for part of its
  // sample makes the host look like more cores than it has.
  const StartGate gate(mpi);
  std::vector<double> together;
  for (int i = 0; i < kTogetherSamples; ++i) {
    gate.pass();
    together.push_back(time_one_forward_block_s(options, tokens));
  }
  // The median, not the best, of the concurrent samples: runs compute side by side
  // for long stretches, where shared caches and memory bandwidth cost more than in
  // the luckiest sample.
  const auto all = mpi.gather(std::vector<double>{alone, median(together)});
  if (mpi.rank() != 0) return 0.0;
  std::vector<double> ratios;
  for (const auto& v : all) ratios.push_back(v[0] / v[1]);
  const double ranks = static_cast<double>(mpi.size());
  // At least one core: a host runs one rank at its own speed. Below 1 means other processes
  // held the cores during the concurrent samples (seen at load 13-18 on a 2-core host, 0.69),
  // and the profile describes the unloaded machine; the loader rejects cores < 1.
  // At most the rank count, and on one host at most its hardware threads: a measurement above
  // is noise (2.03 on this 2-core host, once, before the samples started at one instant).
  double most = ranks;
  if (const unsigned threads = std::thread::hardware_concurrency();
      gate.one_host() && threads > 0) {
    most = std::min(most, static_cast<double>(threads));
  }
  return std::clamp(ranks * median(ratios), 1.0, most);
}

double measure_comm_slowdown(const MpiSession& mpi, const KernelBenchOptions& options,
                             std::int64_t tokens, double bytes) {
  const int peer = mpi.rank() ^ 1;
  const bool paired = peer < mpi.size();
  quiet_barrier(mpi);
  const double without = block_with(options, tokens, [](const std::atomic<bool>&) {});
  std::vector<float> out_buffer(static_cast<std::size_t>(bytes / 4.0), 1.0F);
  std::vector<float> in_buffer(out_buffer.size());
  quiet_barrier(mpi);
  const double with = block_with(options, tokens, [&](const std::atomic<bool>& done) {
    if (!paired) return;
    // Exchange until both sides' blocks are done (each round tells the peer whether to go on).
    int go_on = 1;
    while (go_on != 0) {
      MPI_Request reqs[2];
      mpi_check(MPI_Irecv(in_buffer.data(), static_cast<int>(in_buffer.size()), MPI_FLOAT, peer, 8,
                          mpi.comm(), &reqs[0]),
                "MPI_Irecv");
      mpi_check(MPI_Isend(out_buffer.data(), static_cast<int>(out_buffer.size()), MPI_FLOAT, peer,
                          8, mpi.comm(), &reqs[1]),
                "MPI_Isend");
      wait_polling(reqs[0]);
      wait_polling(reqs[1]);
      int mine = done ? 0 : 1;
      int theirs = 0;
      mpi_check(MPI_Sendrecv(&mine, 1, MPI_INT, peer, 9, &theirs, 1, MPI_INT, peer, 9, mpi.comm(),
                             MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
      go_on = mine != 0 || theirs != 0 ? 1 : 0;
    }
  });
  const auto all = mpi.gather(std::vector<double>{without, with});
  if (mpi.rank() != 0) return 0.0;
  std::vector<double> ratios;
  for (const auto& v : all) ratios.push_back(v[1] / v[0]);
  return std::max(0.0, median(ratios) - 1.0);
}

}  // namespace tilesim::runtime
