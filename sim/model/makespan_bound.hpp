// A proven lower bound on the makespan simulate() (simulator.hpp) gives a plan, computed from
// the plan without simulating it: what the tuner's branch and bound orders and prunes by.
//
// The simulator runs a rank's computes and merges one at a time on its compute stream, each
// for at least its unslowed duration (every stretch is >= 1, compute_stretch.hpp), and posts a
// rank's comm groups one after another, each once the previous one has completed
// (plan_semantics.hpp). A transfer takes at least its time alone,
//   alpha (of the slowest class on its route) + bytes / r_max + route latency,
// r_max = min over the route of capacity x efficiency and of the class flow caps: max-min
// never gives a flow more (flow_transfer_model.hpp). And whatever else moves, the bytes a GPU
// receives (sends) during one group cross its in-links (out-links), whose capacities sum to
// c_in (c_out). So, with g over rank r's comm groups in program order,
//   makespan >= max over ranks r of max(C_r, sum_g T_g),
//   C_r = sum of r's compute and merge durations,
//   T_g = max(the largest alone time of g's transfers, bytes_in(g) / c_in, bytes_out(g) / c_out).
// Each term is lowered by 2 ps, more than the simulator's rounding of one delay can take off.
// Transfers between ranks on one GPU move no bytes over links (only alpha counts). Groups of
// more than kRoutedGroupOps transfers (an all-gather's) skip the per-route term: it would route
// every GPU pair, as costly as the simulation it is meant to avoid.
#pragma once

#include <unordered_map>
#include <vector>

#include "sim/model/calibration_profile.hpp"
#include "sim/model/ring_symmetry.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/windowed_tracker.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

inline constexpr int kRoutedGroupOps = 16;

// The lower bound's ingredients per topology, shared by every plan bounded on it: the
// capacities, and each GPU pair's alone-time constants once routed.
class MakespanBound {
 public:
  // The topology and profile must outlive the bound. InputError as FlowTransferModel for a link
  // class the profile has no costs for.
  MakespanBound(const Topology& topology, const CalibrationProfile& profile);

  // The bound in seconds for `plan` run on its placement (empty: the identity). With a
  // symmetry, `plan` is its quotient (symmetric_simulation.hpp): rank r < K is rank r of the
  // full ring, whose peers are r + d and r - d mod P where the quotient says mod K, and the
  // bound is the largest of the representatives' (each bounds its own rank's end, so their
  // largest bounds the makespan; the other ranks are their images). Under a role quotient
  // (rank_roles.hpp) the representatives are real ranks b..b+K-1 and their bound still bounds
  // the full run's makespan, but the quotient's own makespan approximates the full run's and
  // may lie below it, so pruning against it is approximate too (tune_search.hpp).
  double lower_bound_s(const Plan& plan, const RingSymmetry* symmetry = nullptr);
  // The compute term alone, max over the plan's ranks of C_r: a bound for any plan whose
  // programs run as they stand, so also for a quotient whose peers are not ring offsets (a
  // work block, an offset quotient), where it bounds the quotient's own makespan.
  double compute_lower_bound_s(const Plan& plan) const;
  // The same term of the plan `source` generates, one rank's program at a time and dropped as
  // it is summed (a quotient generated as it runs: the whole one would hold K programs of
  // O(P) ops); the same double as the whole plan's, its ops summed in the same order. The
  // source is spent.
  double compute_lower_bound_s(ProgramSource& source) const;

  // The alone time of one transfer of `bytes` from src_gpu to dst_gpu, lowered as above (the
  // per-transfer term of T_g): what the closed-form bounds (sim/scenario/shape_bound.hpp) add
  // up for the groups a generator's header says a rank runs, without its plan.
  double transfer_alone_ps(int src_gpu, int dst_gpu, double bytes);
  // Several transfers of one group on the same route, `total_bytes` in all: they start alpha
  // after the group's post at the earliest and share the route's narrowest link, whose capacity
  // (x efficiency) max-min never exceeds, so the last completes at least
  //   alpha + total_bytes / min capacity + latency
  // after the post (a flow cap limits each flow, not their sum), lowered as above.
  double route_share_ps(int src_gpu, int dst_gpu, double total_bytes);
  // The group term's other two: `bytes` into (out of) `gpu` over its summed in- (out-) link
  // capacities, lowered; 0 for a GPU without such links.
  double gpu_in_ps(int gpu, double bytes) const;
  double gpu_out_ps(int gpu, double bytes) const;
  // `bytes` into node `node`'s GPUs from outside it: every route from outside enters the node
  // over a link from a device of another node or the fabric to one of the node's, so those
  // bytes cross that cut, whose summed capacity x efficiency max-min never exceeds; lowered;
  // 0 for a node without such links.
  double node_in_ps(int node, double bytes) const;
  int node_of_gpu(int gpu) const { return topology_.node_of_gpu(gpu); }

 private:
  struct PairCost {
    double fixed_ps = 0.0;          // alpha + latency
    double rate_bytes_per_s = 0.0;  // r_max; 0: same GPU, no links
    double link_bytes_per_s = 0.0;  // the route's smallest capacity x efficiency (no flow cap)
  };
  const PairCost& pair_cost(int src_gpu, int dst_gpu);

  const Topology& topology_;
  const CalibrationProfile& profile_;
  Router router_;
  std::vector<double> in_capacity_bytes_per_s_;       // by GPU
  std::vector<double> out_capacity_bytes_per_s_;      // by GPU
  std::vector<double> node_in_capacity_bytes_per_s_;  // by node: links into it from outside
  // The most lanes a ring collective's step can split over: a node's GPUs.
  double max_lanes_ = 1.0;
  std::unordered_map<long long, PairCost> pairs_;
};

}  // namespace tilesim
