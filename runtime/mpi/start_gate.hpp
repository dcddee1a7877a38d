// Starts every rank of a measured run at one instant, so that each rank's timeline (which the
// simulator starts at 0 on every rank) begins when the others' do.
//
// MPI_Barrier does not give that when ranks share cores: a rank leaves it only when the
// scheduler runs it, and 4 ranks on 2 cores left it 0-18 ms apart (OpenMPI's yield_when_idle
// spins waiting ranks with sched_yield). A rank that started early then times the wait for a
// late peer as part of its first transfer (ring, 4 ranks, 1K tokens: first receives of 15-23 ms
// where 1.2-2.5 ms were predicted; 0.3-7 ms with the gate).
//
// On one host (every rank's MPI processor name equal) the ranks share steady_clock: rank 0
// names an instant kLead ahead, every rank sleeps until it and starts. A sleeping rank takes no
// core, so all wake within the scheduler's wake-up latency. Across hosts the clocks differ and
// the gate is a barrier.
#pragma once

#include <chrono>

#include "runtime/mpi/mpi_session.hpp"

namespace tilesim::runtime {

class StartGate {
 public:
  // Collective: finds out whether every rank runs on this host.
  explicit StartGate(const MpiSession& mpi);

  // Collective: returns on every rank at (about) the same instant.
  void pass() const;

  bool one_host() const { return one_host_; }

  // How far ahead rank 0 sets the instant: more than the broadcast takes to reach every rank
  // when ranks share cores (a few scheduler slices), small against any run.
  static constexpr std::chrono::milliseconds kLead{50};

 private:
  const MpiSession& mpi_;
  bool one_host_ = false;
};

}  // namespace tilesim::runtime
