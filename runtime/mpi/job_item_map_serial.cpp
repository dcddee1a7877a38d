// JobItemMap in a build without MPI: every item runs here, one after another.
#include <cstdlib>

#include "runtime/mpi/job_item_map.hpp"

namespace tilesim::runtime {

struct JobItemMap::Job {};

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

JobItemMap::JobItemMap() = default;
JobItemMap::~JobItemMap() = default;
bool JobItemMap::prints() const { return true; }
ItemMap JobItemMap::map() const { return map_serially; }

}  // namespace tilesim::runtime
