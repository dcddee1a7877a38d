// The ItemMap of this process (sim/verbs/item_map.hpp): how `sweep` and `tune` spread their
// independent items.
//
// Started by mpirun (OpenMPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_SIZE of other launchers,
// is set) with N > 1 ranks: rank r evaluates items r, r + N, r + 2N, ... (round robin: a tune's
// neighbouring candidates, e.g. the two placements of one tile, cost alike, so each rank gets a
// similar mix), then rank 0 gathers every result and puts them back in item order; only rank 0
// prints. Otherwise, and in a build without MPI, the items run here one after another. Either
// way the verb's document is the same, byte for byte.
#pragma once

#include <memory>

#include "sim/verbs/item_map.hpp"

namespace tilesim::runtime {

class JobItemMap {
 public:
  JobItemMap();  // joins the MPI job when started by mpirun
  ~JobItemMap();
  JobItemMap(const JobItemMap&) = delete;
  JobItemMap& operator=(const JobItemMap&) = delete;

  bool prints() const;  // rank 0, or no MPI job
  ItemMap map() const;

 private:
  struct Job;
  std::unique_ptr<Job> job_;  // null: serial
};

// Whether a launcher such as mpirun started this process.
bool launched_by_mpirun();

}  // namespace tilesim::runtime
