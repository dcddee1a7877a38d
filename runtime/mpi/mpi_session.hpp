// RAII for MPI: the session (MPI_Init_thread / MPI_Finalize) and error checks.
//
// One MpiSession lives in the run verb (no global state). Only the main thread calls MPI
// (MPI_THREAD_FUNNELED). MPI_COMM_WORLD gets MPI_ERRORS_RETURN so that an MPI error comes back
// as a code, turned into an exception by mpi_check, instead of killing the process silently.
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
  MPI_Comm world() const { return MPI_COMM_WORLD; }
  void barrier() const;
  // Ends every rank of the job (after the caller printed why).
  [[noreturn]] void abort(int code) const;

  // Collectives over the world.
  bool all_true(bool value) const;
  int broadcast(int value) const;  // rank 0's value
  // Gathers each rank's values to rank 0 (empty elsewhere), one vector per rank.
  std::vector<std::vector<std::int64_t>> gather(const std::vector<std::int64_t>& mine) const;
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) const;
  std::vector<std::string> gather(const std::string& mine) const;  // bytes, one string per rank

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace tilesim::runtime
