// RAII for MPI: the session (MPI_Init_thread / MPI_Finalize) and error checks.
//
// One MpiSession lives in the run verb (no global state). Only the main thread calls MPI
// (MPI_THREAD_FUNNELED). MPI_COMM_WORLD gets MPI_ERRORS_RETURN so that an MPI error comes back
// as a code, turned into an exception by mpi_check, instead of killing the process silently.
//
// rank(), size() and every collective here are those of comm(): MPI_COMM_WORLD until
// order_ranks renumbers the processes (a plan that places rank r on GPU placement[r] runs plan
// rank r on the process of world rank placement[r], whose device is that GPU), after which
// comm() is a communicator whose rank i is the process that called order_ranks(i). The device
// a process drives stays that of its world rank (world_rank()).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tilesim::runtime {

// Throws std::runtime_error "<what>: <MPI error string>" unless rc == MPI_SUCCESS.
void mpi_check(int rc, const char* what);

class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int world_rank() const { return world_rank_; }
  MPI_Comm comm() const { return comm_; }
  // Collective over comm(): afterwards this process has rank `position` (every process passes
  // a distinct position in 0..size()-1).
  void order_ranks(int position);
  void barrier() const;
  // Ends every rank of the job (after the caller printed why).
  [[noreturn]] void abort(int code) const;

  // Collectives over comm().
  bool all_true(bool value) const;
  int broadcast(int value) const;  // rank 0's value
  // Gathers each rank's values to rank 0 (empty elsewhere), one vector per rank.
  std::vector<std::vector<std::int64_t>> gather(const std::vector<std::int64_t>& mine) const;
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) const;
  std::vector<std::string> gather(const std::string& mine) const;  // bytes, one string per rank

 private:
  int world_rank_ = 0;
  int rank_ = 0;
  int size_ = 1;
  MPI_Comm comm_ = MPI_COMM_WORLD;
};

}  // namespace tilesim::runtime
