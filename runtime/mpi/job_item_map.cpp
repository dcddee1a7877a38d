#include "runtime/mpi/job_item_map.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "runtime/mpi/mpi_session.hpp"

namespace tilesim::runtime {

struct JobItemMap::Job {
  MpiSession mpi;
};

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

JobItemMap::JobItemMap() {
  if (launched_by_mpirun()) job_ = std::make_unique<Job>();
}

JobItemMap::~JobItemMap() = default;

bool JobItemMap::prints() const { return job_ == nullptr || job_->mpi.rank() == 0; }

ItemMap JobItemMap::map() const {
  if (job_ == nullptr || job_->mpi.size() == 1) return map_serially;
  const MpiSession& mpi = job_->mpi;
  return [&mpi](std::size_t n, const ItemFn& item, const ProgressFn& progress) {
    const auto rank = static_cast<std::size_t>(mpi.rank());
    const auto ranks = static_cast<std::size_t>(mpi.size());
    // This rank's results, sent as one JSON array of strings.
    nlohmann::json mine = nlohmann::json::array();
    const std::size_t my_items = n > rank ? (n - rank + ranks - 1) / ranks : 0;
    for (std::size_t i = rank; i < n; i += ranks) {
      mine.push_back(item(i));
      if (progress && rank == 0) progress(mine.size(), my_items);
    }
    const std::vector<std::string> gathered = mpi.gather(mine.dump());
    std::vector<std::string> results;
    if (rank != 0) return results;
    results.resize(n);
    for (std::size_t r = 0; r < gathered.size(); ++r) {
      const nlohmann::json theirs = nlohmann::json::parse(gathered[r]);
      for (std::size_t k = 0; k < theirs.size(); ++k)
        results[r + k * ranks] = theirs[k].get<std::string>();
    }
    return results;
  };
}

}  // namespace tilesim::runtime
