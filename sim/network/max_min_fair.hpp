// Max-min fair rate allocation of flows over shared links (pure computation).
//
// Model: flow i crosses the links of its route and may be capped at c_i. The
// max-min fair allocation is the unique feasible rate vector in which every
// flow has a bottleneck: its cap, or a saturated link on which no other flow
// gets more. It is found by progressive filling, computed per bottleneck:
//   share(l) = (C_l - sum of frozen rates on l) / (number of unfrozen flows on l)
// Pop the smallest share from a min-heap (a cap c_i is a private link of
// capacity c_i), freeze the link's unfrozen flows at that share, subtract their
// rates from the other links of their routes, re-key those links, repeat.
// Shares never decrease as flows freeze, so every pop is a fill level.
// Cost: O((n + m + L) log(n + m + L)) for n flows, m links, total route length L.
//
// Flow classes (one flow standing for k identical ones on a link) are FlowNetwork's
// (FlowSpec::link_multiplicity); this solver is the plain problem, the reference the
// tests check FlowNetwork's filling and its classes against.
//
// Determinism: flows are processed in the order given, ties between equal
// shares are broken by link id (links before caps, caps by flow index). Because
// a flow's rate depends only on the events of its own connected component, and
// those keep their relative order whatever else is in the problem, solving one
// component alone gives bit-identical rates to solving it inside a larger
// problem, provided the flows are given in the same relative order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tilesim {

// Flows in compressed form: the route of flow i is
// route_links[route_offsets[i] .. route_offsets[i + 1]).
struct FairShareProblem {
  std::vector<int> route_links;
  std::vector<std::size_t> route_offsets{0};
  std::vector<double> rate_cap_bytes_per_s;  // <= 0 means no cap

  void add_flow(std::span<const int> links, double rate_cap_bytes_per_s);
  std::size_t flow_count() const { return rate_cap_bytes_per_s.size(); }
  std::span<const int> route(std::size_t flow) const;
  void clear();
};

// Reusable scratch space for the allocation (a value type; keeping one avoids
// re-allocating on every call). Link ids index `link_capacity_bytes_per_s`,
// whose entries must be > 0; a route must not repeat a link.
class MaxMinFairSolver {
 public:
  // Writes one rate per flow into `rates_bytes_per_s` (resized). A flow with an
  // empty route gets its cap, or +infinity when it has no cap either.
  void solve(std::span<const double> link_capacity_bytes_per_s, const FairShareProblem& problem,
             std::vector<double>& rates_bytes_per_s);

 private:
  struct HeapEntry {
    double share_bytes_per_s;
    std::int64_t tag;  // link id, or link count + flow index for a cap
    std::uint32_t version;
  };
  // Heap order: std::push_heap keeps the "largest" on top, so ordering by
  // `Later` puts the smallest (share, tag) there.
  struct Later {
    bool operator()(const HeapEntry& a, const HeapEntry& b) const {
      if (a.share_bytes_per_s != b.share_bytes_per_s) {
        return a.share_bytes_per_s > b.share_bytes_per_s;
      }
      return a.tag > b.tag;
    }
  };

  void index_links(std::size_t link_count, const FairShareProblem& problem);
  void freeze(const FairShareProblem& problem, std::size_t flow, double rate_bytes_per_s,
              std::vector<double>& rates_bytes_per_s);
  void push_link(int local, bool keep_heap);
  void rekey_touched(int skip_local);

  std::vector<int> local_of_link_;  // by link id; -1 when not in the problem
  std::vector<int> link_ids_;       // by local index
  std::vector<double> remaining_bytes_per_s_;
  std::vector<int> unfrozen_;  // unfrozen flows on the link
  std::vector<std::uint32_t> version_;
  std::vector<std::size_t> member_offsets_;  // flows of each local link (CSR)
  std::vector<std::size_t> members_;
  std::vector<std::size_t> fill_;
  std::vector<char> frozen_;
  std::vector<int> touched_;  // local links changed by the current pop
  std::vector<char> is_touched_;
  std::vector<HeapEntry> heap_;
};

// Convenience wrapper around MaxMinFairSolver::solve.
std::vector<double> max_min_fair_rates(std::span<const double> link_capacity_bytes_per_s,
                                       const FairShareProblem& problem);

}  // namespace tilesim
