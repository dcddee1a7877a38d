// Link utilisation over time per link class, from a simulation's link samples.
//
// A sample (t, link, load) says the link carries `load` bytes/s from t until its next sample.
// The utilisation of class c over a time bin [t0, t1) is the time-weighted mean over the bin of
//   sum of loads of the class's links / sum of their spec bandwidths,
// i.e. the share of the class's aggregate capacity in use (1 = every link of the class full).
#pragma once

#include <vector>

#include "sim/model/simulation_result.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct ClassUtilisation {
  LinkClass cls = LinkClass::nvlink;
  std::vector<double> bins;  // utilisation 0..1 of each of `bin_count` equal bins of the makespan
};

// Classes that have links in the topology, in LinkClass order.
std::vector<ClassUtilisation> link_utilisation(const Topology& topology,
                                               const SimulationResult& result, int bin_count);

}  // namespace tilesim
