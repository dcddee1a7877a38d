// Lower bounds on a candidate's makespan from the closed forms of its shape, without building
// its plan: the tuner's branch and bound (tune_search.hpp) orders and prunes by them.
//
// The bound of makespan_bound.hpp is, per rank r, max(C_r, sum over r's comm groups of T_g),
// T_g >= the alone time of any one transfer of the group (alpha + bytes / the route's r_max +
// latency) and >= its bytes over the GPU's summed in- (out-) link capacities, the groups of a
// rank running one after another. Beyond the plan-based bound: a group's transfers on one
// route share its narrowest link, share(x) = alpha + x / min capacity + latency for their x
// bytes in all (MakespanBound::route_share_ps; USP's ring bundles). Each generator's header says
// which groups a rank runs; their sum in closed form, c = S / P tokens a chunk, q, kv, o (fp32
// partial), of (output) of one chunk, "step(x)" = max(alone(prev -> r, x), alone(r -> next, x)) on
// the ring named, the smaller of its two directions (so no bound depends on which way a ring
// turns):
//   ring, zigzag, striped  (P-1) step(kv)                                   ring_passes.hpp
//     backward: (P-1) step(kv) + P step(dkv) (dkv the partial dK+dV, the last hop home)
//   pass-Q                 (P-1) step(q) + sum_s max(alone(r -> r-s, o), alone(r+s -> r, o))
//   all-gather KV          max((P-1) kv / c_in, (P-1) kv / c_out, alone to or from any peer)
//     backward: the same of kv + dkv (the all-gather again, the reduce-scatter's running sums)
//   double ring, P = n k   (n-1) max(step_in(kv), step_out(kv)) + (n(k-1) - (n-1)) step_in(kv)
//                          (the outer hop joins the first inner group; k = 1: (n-1) step_out)
//     backward: the same KV term + [k > 1] n k step_in(dkv) + [n > 1] n step_out(dkv)
//   USP u x r, Ulysses r=1 A(q/u + kv/u) + (r-1) max(step(kv/u), share(u x kv/u),
//                          u kv/u / c_in|out) + A(of/u),
//                          A(x) the all-to-all group's max(alone(x), (u-1) x / c_in|out)
//     backward: A(dO/u) + (r-1) (the KV step above) + [r > 1] r (the same of dkv/u)
//               + A(dQ/u + dKV/u) (dKV the partial where r > 1, else the output)
//   mesh a x b             (a-1) (step_Q(q) + step_Q(o)) + (b-1) step_KV(kv)  mesh_schedule.hpp
//     backward, m = max(a, b) - 1: m gather groups (step_Q of the largest of Q, dO, O, LSE,
//     step_KV(kv), the group's bytes over the GPU's link capacities; the shorter ring stops
//     after its own steps) and m reduce groups the same over dQ and dKV partials
// and, for every kind, the compute term: each unmasked pair is computed once a pass, so the
// busiest rank computes at least 1/P of them, at no more than the largest call efficiency e_sup
// the profile can give the pass (every stretch is at least 1), with one launch at least, the
// passes one after another:
//   C = sum over passes of pairs(S, S) / P x flops_per_pair / (peak x e_sup x causal_sup)
//       + launch_overhead,
// e_sup = min(1, the pass's efficiency table's largest value / the reference launch's occupancy), 1
// under a causal mask (its occupancy is against a causal reference), causal_sup >= 1 the
// causal factor table's largest value. Where every rank's calls are alike and known (full
// mask; every kind but mesh, whose fused calls vary) the compute term is also their count x
// their time at the profile's efficiency for their geometry: ring family, pass-Q, double ring
// P calls of c x c tokens, all-gather one of c x S, USP r calls of u c x u c over heads / u
// (the backward of each as many: the rings and USP one per step, the all-gather one; the
// plan-based bound's C_r less the correction merges). Every term but share() is one the plan-based
// bound also counts, or a smaller one (lowered by 2 ps per op as there), and share() holds by the
// link-capacity argument above, so this stays a proven lower bound. The ranks taken are every rank,
// or the first two nodes' where a rank talks to all others (pass-Q, all-gather, Ulysses across
// nodes): the max over some ranks bounds the max over all. tests/test_tune_search.cpp checks it
// against the plan-based bound (16-256 GPUs, full and causal masks) and the simulated makespan.
//
// No closed form (nullopt: the caller bounds the plan): masks that may leave chunk pairs empty
// (sliding window, documents: the generators then move less), work-balanced ring or
// all-gather ownership, KV-head replication in USP, and shapes the generator refuses (tokens
// that do not split, a memory budget no mesh window fits), for its reason.
#pragma once

#include <optional>

#include "sim/model/calibration_profile.hpp"
#include "sim/model/makespan_bound.hpp"
#include "sim/plan/attention_shape.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

// The closed-form bound in seconds for `spec` on `shape`, or nullopt where there is none.
std::optional<double> shape_lower_bound_s(const AttentionShape& shape, const ScheduleSpec& spec,
                                          const CalibrationProfile& profile, MakespanBound& bound);

// The compute term alone, in seconds: valid under every mask for the schedules that compute
// each unmasked pair once (all of them), where shape_lower_bound_s has no closed form for the
// communication (a window, documents); at least the launch overhead, so never 0.
double shape_compute_floor_s(const AttentionShape& shape, const ScheduleSpec& spec,
                             const CalibrationProfile& profile);

// A second proven lower bound, used only to skip simulations whose figures tune would not
// print (tune_search.hpp), not to prune: the bound tune prints stays the one above. The
// all-gather's node cut: NCCL's ring brings each KV chunk of a rank outside node n into n once,
// so n takes (ranks outside n) x kv over the links into it (MakespanBound::node_in_ps); the
// largest over nodes, in seconds. nullopt for another
// schedule or where shape_lower_bound_s has no closed form.
std::optional<double> shape_cut_floor_s(const AttentionShape& shape, const ScheduleSpec& spec,
                                        const CalibrationProfile& profile, MakespanBound& bound);

}  // namespace tilesim
