#include "runtime/mpi/start_gate.hpp"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <thread>

namespace tilesim::runtime {

namespace {

bool every_rank_on_this_host(const MpiSession& mpi) {
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  mpi_check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  const auto names = mpi.gather(std::string(name, static_cast<std::size_t>(length)));
  int same = 1;
  for (const std::string& n : names) same = same != 0 && n == names.front() ? 1 : 0;
  mpi_check(MPI_Bcast(&same, 1, MPI_INT, 0, mpi.comm()), "MPI_Bcast");
  return same != 0;
}

}  // namespace

StartGate::StartGate(const MpiSession& mpi) : mpi_(mpi), one_host_(every_rank_on_this_host(mpi)) {}

void StartGate::pass() const {
  if (!one_host_) {
    mpi_.barrier();
    return;
  }
  using Clock = std::chrono::steady_clock;
  std::int64_t start_ns = 0;
  if (mpi_.rank() == 0) {
    start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   (Clock::now() + kLead).time_since_epoch())
                   .count();
  }
  mpi_check(MPI_Bcast(&start_ns, 1, MPI_INT64_T, 0, mpi_.comm()), "MPI_Bcast");
  // A rank the broadcast reached after the instant starts at once: late, as after a barrier.
  std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(start_ns)));
}

}  // namespace tilesim::runtime
