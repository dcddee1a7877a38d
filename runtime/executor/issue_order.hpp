// The order the executor keeps on one rank, from the plan semantics (sim/plan/plan_semantics.hpp).
//
// Compute and merge ops are issued in program order, comm groups in program order (a whole
// group at once), free ops on the host as soon as what they wait for has finished. An op is
// issued when every op it waits for has finished or has been issued on a stream the backend
// orders before it. An op waits for its prerequisites and, a comm op of group g > 0, for
// every op of group g-1 (a group is posted once the previous one has completed); a comm op
// does not wait for ops of its own group, which are posted with it.
#pragma once

#include <vector>

#include "sim/plan/plan.hpp"
#include "sim/plan/plan_semantics.hpp"

namespace tilesim::runtime {

class IssueOrder {
 public:
  // Throws PlanError for a plan whose order cannot be derived (plan_semantics.hpp).
  IssueOrder(const Plan& plan, int rank);

  const RankSemantics& semantics() const { return semantics_; }
  // The ops `op` waits for, ascending, into `out` (cleared first).
  void waits_for(int op, std::vector<int>& out) const;

 private:
  RankSemantics semantics_;
};

}  // namespace tilesim::runtime
