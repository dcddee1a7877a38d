#include "runtime/mpi/mpi_session.hpp"

#include <numeric>
#include <stdexcept>

namespace tilesim::runtime {
namespace {

template <typename T>
std::vector<std::vector<T>> gather_values(const MpiSession& mpi, const std::vector<T>& mine,
                                          MPI_Datatype type) {
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(mpi.size()));
  mpi_check(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, mpi.comm()), "MPI_Gather");
  std::vector<int> displs(counts.size(), 0);
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
  std::vector<T> all(mpi.rank() == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
  mpi_check(MPI_Gatherv(mine.data(), count, type, all.data(), counts.data(), displs.data(), type, 0,
                        mpi.comm()),
            "MPI_Gatherv");
  std::vector<std::vector<T>> out;
  if (mpi.rank() != 0) return out;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const auto begin = all.begin() + displs[r];
    out.emplace_back(begin, begin + counts[r]);
  }
  return out;
}

}  // namespace

void mpi_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(what) + ": " +
                           std::string(text, static_cast<std::size_t>(length)));
}

MpiSession::MpiSession() {
  int provided = 0;
  mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  rank_ = world_rank_;
}

MpiSession::~MpiSession() {
  if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  MPI_Finalize();
}

void MpiSession::order_ranks(int position) {
  MPI_Comm ordered = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split(comm_, 0, position, &ordered), "MPI_Comm_split");
  MPI_Comm_set_errhandler(ordered, MPI_ERRORS_RETURN);
  if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  comm_ = ordered;
  mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  if (rank_ != position) {
    throw std::logic_error("MpiSession::order_ranks: positions are not 0..size-1, each once");
  }
}

void MpiSession::barrier() const { mpi_check(MPI_Barrier(comm_), "MPI_Barrier"); }

void MpiSession::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);  // every process of the job, whatever comm_ holds
  std::abort();                     // MPI_Abort does not return; keep [[noreturn]] honest
}

bool MpiSession::all_true(bool value) const {
  int in = value ? 1 : 0;
  int out = 0;
  mpi_check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
  return out == 1;
}

int MpiSession::broadcast(int value) const {
  mpi_check(MPI_Bcast(&value, 1, MPI_INT, 0, comm_), "MPI_Bcast");
  return value;
}

std::vector<std::vector<std::int64_t>> MpiSession::gather(
    const std::vector<std::int64_t>& mine) const {
  return gather_values(*this, mine, MPI_INT64_T);
}

std::vector<std::vector<double>> MpiSession::gather(const std::vector<double>& mine) const {
  return gather_values(*this, mine, MPI_DOUBLE);
}

std::vector<std::string> MpiSession::gather(const std::string& mine) const {
  const std::vector<std::vector<char>> all =
      gather_values(*this, std::vector<char>(mine.begin(), mine.end()), MPI_CHAR);
  std::vector<std::string> out;
  for (const auto& bytes : all) out.emplace_back(bytes.begin(), bytes.end());
  return out;
}

}  // namespace tilesim::runtime
