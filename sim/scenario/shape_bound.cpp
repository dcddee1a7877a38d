#include "sim/scenario/shape_bound.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "sim/schedules/mesh_memory.hpp"
#include "sim/schedules/mesh_order.hpp"
#include "sim/schedules/mesh_placement.hpp"
#include "sim/schedules/mesh_tile.hpp"
#include "sim/schedules/schedule_kinds.hpp"

namespace tilesim {
namespace {

// makespan_bound.cpp's allowance for the simulator's rounding of one delay, per op.
constexpr double kRoundingPs = 2.0;

// Ranks whose bound is taken where a rank talks to every other (pass-Q, all-gather): the max
// over a subset of ranks is still a lower bound, and two nodes' worth cover every position in
// a node and both sides of a node boundary.
int sampled_ranks(const ScheduleSpec& spec) {
  return std::min(spec.gpus, 2 * std::max(1, spec.gpus_per_node));
}

// Rank -> GPU and the alone time of transfers between ranks.
class Transfers {
 public:
  Transfers(MakespanBound& bound, std::vector<int> placement)
      : bound_(bound), placement_(std::move(placement)) {}
  int gpu(int rank) const {
    return placement_.empty() ? rank : placement_[static_cast<std::size_t>(rank)];
  }
  double alone_ps(int from, int to, double bytes) const {
    return bound_.transfer_alone_ps(gpu(from), gpu(to), bytes);
  }
  // One group of a ring step on `rank`: in from one neighbour, out to the other; the smaller
  // of the two directions the ring may turn.
  double ring_step_ps(int prev, int rank, int next, double bytes) const {
    const double forward_ps = std::max(alone_ps(prev, rank, bytes), alone_ps(rank, next, bytes));
    const double backward_ps = std::max(alone_ps(next, rank, bytes), alone_ps(rank, prev, bytes));
    return std::min(forward_ps, backward_ps);
  }
  // The same for a bundle of `count` transfers of `bytes` each way, sharing each route
  // (MakespanBound::route_share_ps).
  double bundle_step_ps(int prev, int rank, int next, double bytes, int count) const {
    auto leg_ps = [&](int from, int to) {
      return std::max(alone_ps(from, to, bytes),
                      bound_.route_share_ps(gpu(from), gpu(to), count * bytes));
    };
    return std::min(std::max(leg_ps(prev, rank), leg_ps(rank, next)),
                    std::max(leg_ps(next, rank), leg_ps(rank, prev)));
  }
  // A group in which `rank` receives in_bytes and sends out_bytes in all: the GPU's summed link
  // capacities bound it whatever the peers.
  double gpu_ps(int rank, double in_bytes, double out_bytes) const {
    return std::max(bound_.gpu_in_ps(gpu(rank), in_bytes), bound_.gpu_out_ps(gpu(rank), out_bytes));
  }

 private:
  MakespanBound& bound_;
  std::vector<int> placement_;
};

// The largest call efficiency of `pass` the profile can give any call (calibration_profile.hpp:
// e = min(1, table(size) x occupancy(call) / occupancy(reference launch))): the pass's table's
// largest value over every head_dim row (inside a row it interpolates, above it holds the last
// value, below it continues the first segment, unbounded when that falls towards larger sizes),
// and an occupancy of at most 1 over the reference launch's.
double efficiency_sup(const CalibrationProfile& profile, Pass pass) {
  const std::map<int, EfficiencyCurve>& table =
      pass == Pass::fwd ? profile.forward : profile.backward;
  if (table.empty()) return 1.0;
  double table_sup = EfficiencyCurve::kMinEfficiency;
  for (const auto& [head_dim, curve] : table) {
    const auto& points = curve.points;
    if (points.empty()) return 1.0;
    if (points.size() >= 2 && points[1].second < points[0].second) return 1.0;
    for (const auto& [tokens, value] : points) table_sup = std::max(table_sup, value);
  }
  const OccupancyModel& occupancy = profile.occupancy;
  const double reference =
      occupancy.enabled() ? occupancy.occupancy(occupancy.reference_ctas) : 1.0;
  return reference > 0 ? std::min(1.0, table_sup / reference) : 1.0;
}

// The largest causal factor a cut block can get (causal_efficiency, the same table rule), at
// least 1: a factor above 1 would speed a cut block up.
double causal_factor_sup(const CalibrationProfile& profile) {
  const auto& points = profile.causal_efficiency.points;
  double sup = 1.0;
  if (points.size() >= 2 && points[1].second < points[0].second) return 0.0;  // unbounded
  for (const auto& [tokens, value] : points) sup = std::max(sup, value);
  return sup;
}

// Every pair the mask keeps is computed once in each pass in these schedules, so the busiest
// rank computes at least 1/P of them (all of them: S^2 under the full mask, S(S+1)/2 causal),
// at no more than the pass's largest call efficiency (causal: 1, times the largest causal
// factor for cut blocks; every stretch >= 1), and launches at least one call per pass. The
// passes run one after another on the compute stream, so their floors add. Lowered by 2 ps for
// each of at most P ops a pass.
double compute_floor_ps(const AttentionShape& shape, const ScheduleSpec& spec,
                        const CalibrationProfile& profile) {
  const PositionRun all{0, 1, shape.seq_len};
  const double pairs = shape.mask.pairs(all, all);
  const double causal_sup = shape.mask.hides_future() ? causal_factor_sup(profile) : 1.0;
  if (causal_sup <= 0) return 0.0;
  double floor_ps = 0.0;
  for (const Pass pass : {Pass::fwd, Pass::bwd}) {
    if (pass == Pass::fwd ? !shape.has_forward() : !shape.has_backward()) continue;
    const double per_pair =
        pass == Pass::fwd ? shape.flops_per_pair_forward() : shape.flops_per_pair_backward();
    const double flops = pairs / spec.gpus * per_pair;
    // A causal call's occupancy is against the reference causal launch's (occupancy.hpp),
    // which may sit further below 1 than the equal-CTA reference: only e <= 1 holds for it.
    const double e_sup = shape.mask.hides_future() ? 1.0 : efficiency_sup(profile, pass);
    const double rate = profile.peak_flops * e_sup * causal_sup;
    floor_ps +=
        std::max(0.0, (flops / rate + profile.launch_overhead_s) * 1e12 - kRoundingPs * spec.gpus);
  }
  return floor_ps;
}

// The attention calls every rank makes, where they are all alike (full mask): count calls of
// q_tokens x kv_tokens over `heads` heads. Ring family, pass-Q, double ring: one call per step
// of its chunk against one other (c x c); all-gather KV: one call of its chunk against all S
// keys; USP and Ulysses: one call per ring step of the group's u chunks against a bundle of u
// (u c x u c, heads / u). Mesh fuses blocks into calls of varying size: not here.
struct Calls {
  int count = 0;
  double q_tokens = 0.0;
  double kv_tokens = 0.0;
  int heads = 0;
};

std::optional<Calls> pass_calls(const AttentionShape& shape, const ScheduleSpec& spec, Pass pass) {
  if (shape.mask.kind != AttentionMaskKind::full) return std::nullopt;
  const std::string& kind = spec.kind;
  const int p = spec.gpus;
  const double c = static_cast<double>(shape.seq_len / p);
  // The rings' backward makes one call per step too (ring_passes.hpp, double_ring_schedule.hpp,
  // usp_schedule.hpp).
  if (kind == "ring" || kind == "zigzag" || kind == "striped" || kind == "double_ring") {
    return Calls{p, c, c, shape.heads};
  }
  if (kind == "usp" || kind == "ulysses") {
    const int u = kind == "ulysses" ? p : usp_ulysses_degree(shape, spec);
    return Calls{p / u, u * c, u * c, shape.heads / u};
  }
  // The all-gather's backward is one call too (allgather_kv_schedule.hpp).
  if (kind == "allgather_kv") return Calls{1, c, static_cast<double>(shape.seq_len), shape.heads};
  if (pass == Pass::bwd) return std::nullopt;
  if (kind == "pass_q") return Calls{p, c, c, shape.heads};
  return std::nullopt;
}

// Those calls at the profile's efficiency for their geometry (ComputeModel::compute_time_s,
// unslowed: every stretch >= 1), each lowered by 2 ps, summed over the passes (one compute
// stream runs them one after another); a pass whose calls are not known adds 0.
double calls_floor_ps(const AttentionShape& shape, const ScheduleSpec& spec,
                      const CalibrationProfile& profile) {
  double floor_ps = 0.0;
  for (const Pass pass : {Pass::fwd, Pass::bwd}) {
    if (pass == Pass::fwd ? !shape.has_forward() : !shape.has_backward()) continue;
    const std::optional<Calls> calls = pass_calls(shape, spec, pass);
    if (!calls) continue;
    AttentionCall call;
    call.pass = pass;
    call.head_dim = shape.head_dim;
    call.q_tokens = calls->q_tokens;
    call.kv_tokens = calls->kv_tokens;
    call.heads = calls->heads;
    call.batch = shape.batch;
    const double e = profile.call_efficiency(call, nullptr);
    const double per_pair =
        pass == Pass::fwd ? shape.flops_per_pair_forward() : shape.flops_per_pair_backward();
    const double flops = calls->q_tokens * calls->kv_tokens * per_pair * calls->heads / shape.heads;
    const double call_ps = (flops / (profile.peak_flops * e) + profile.launch_overhead_s) * 1e12;
    floor_ps += calls->count * std::max(0.0, call_ps - kRoundingPs);
  }
  return floor_ps;
}

// ring_passes.hpp: forward P-1 groups, bundle KV (one chunk, one object) to k+1, from k-1;
// backward the same P-1 KV groups and P dKV groups (the partial dKV to k+1, from k-1; the last
// one brings each home), the passes one after another on the comm stream.
double ring_family_ps(const AttentionShape& shape, const ScheduleSpec& spec, MakespanBound& bound) {
  const int p = spec.gpus;
  const Transfers t(bound, {});
  const std::int64_t c = shape.seq_len / p;
  const double kv = shape.kv_bytes(c), dkv = shape.dkv_accumulator_bytes(c);
  double worst_ps = 0.0;
  for (int r = 0; r < p; ++r) {
    const int prev = (r + p - 1) % p, next = (r + 1) % p;
    const double kv_ps = (p - 1) * t.ring_step_ps(prev, r, next, kv);
    double ps = shape.has_forward() ? kv_ps : 0.0;
    if (shape.has_backward()) ps += kv_ps + (p > 1 ? p * t.ring_step_ps(prev, r, next, dkv) : 0.0);
    worst_ps = std::max(worst_ps, ps);
  }
  return worst_ps;
}

// pass_q_schedule.hpp: P-1 Q groups (q to r+1, from r-1) and P-1 partial groups, step s:
// O and LSE to r-s, from r+s.
double pass_q_ps(const AttentionShape& shape, const ScheduleSpec& spec, MakespanBound& bound) {
  const int p = spec.gpus;
  const Transfers t(bound, {});
  const std::int64_t c = shape.seq_len / p;
  const double q = shape.q_bytes(c);
  const double o = std::max(shape.o_accumulator_bytes(c), shape.lse_bytes(c));
  double worst_ps = 0.0;
  for (int r = 0; r < sampled_ranks(spec); ++r) {
    double ps = (p - 1) * t.ring_step_ps((r + p - 1) % p, r, (r + 1) % p, q);
    for (int s = 1; s < p; ++s) {
      ps += std::max(t.alone_ps(r, (r - s + p) % p, o), t.alone_ps((r + s) % p, r, o));
    }
    worst_ps = std::max(worst_ps, ps);
  }
  return worst_ps;
}

// allgather_kv_schedule.hpp, the full and causal masks these bounds take: NCCL's ring
// all-gather, P - 1 steps of kv in from r - 1 and out to r + 1, each split over the lanes of
// the sender's node (the group's ranks there), whose one share alone bounds the step; and
// every rank takes in and sends out (P-1) kv through its own links. Backward: the all-gather
// again, then NCCL's ring reduce-scatter, P - 1 steps of a running dKV sum (the partial dtype)
// the same way; a pass's groups take at least the larger of their steps' sum and their bytes
// over the GPU's links.
double allgather_kv_ps(const AttentionShape& shape, const ScheduleSpec& spec,
                       MakespanBound& bound) {
  const int p = spec.gpus;
  const Transfers t(bound, {});
  const std::int64_t c = shape.seq_len / p;
  const double kv = shape.kv_bytes(c), dkv = shape.dkv_accumulator_bytes(c);
  const double lanes = std::max(1, std::min(p, spec.gpus_per_node));
  double worst_ps = 0.0;
  for (int r = 0; r < sampled_ranks(spec); ++r) {
    const int prev = (r + p - 1) % p, next = (r + 1) % p;
    const double kv_steps_ps = (p - 1) * t.ring_step_ps(prev, r, next, kv / lanes);
    double ps = 0.0;
    if (shape.has_forward()) {
      ps += std::max(kv_steps_ps, t.gpu_ps(r, (p - 1) * kv, (p - 1) * kv));
    }
    if (shape.has_backward()) {
      const double steps_ps = kv_steps_ps + (p - 1) * t.ring_step_ps(prev, r, next, dkv / lanes);
      ps += std::max(steps_ps, t.gpu_ps(r, (p - 1) * (kv + dkv), (p - 1) * (kv + dkv)));
    }
    worst_ps = std::max(worst_ps, ps);
  }
  return worst_ps;
}

// double_ring_schedule.hpp, P = n k: per outer step k-1 inner groups (kv to (N, i+1), from
// (N, i-1)); the outer transfer (kv to (N+1, i), from (N-1, i)) joins the first inner group of
// the first n-1 outer steps, or is a group of its own when k = 1. Backward the same KV groups,
// then per inner step a dKV group (k > 1: to (N, i+1), from (N, i-1), n k of them) and per
// outer step one more (n > 1: to (N+1, i), from (N-1, i), n of them; the last brings each dKV
// home), the passes one after another on the comm stream.
double double_ring_ps(const AttentionShape& shape, const ScheduleSpec& spec, int k,
                      MakespanBound& bound) {
  const int p = spec.gpus;
  const int n = p / k;
  const Transfers t(bound, {});
  const std::int64_t c = shape.seq_len / p;
  const double kv = shape.kv_bytes(c), dkv = shape.dkv_accumulator_bytes(c);
  double worst_ps = 0.0;
  for (int r = 0; r < p; ++r) {
    const int node = r / k, i = r % k;
    const int inner_prev = node * k + (i + k - 1) % k, inner_next = node * k + (i + 1) % k;
    const int outer_prev = ((node + n - 1) % n) * k + i, outer_next = ((node + 1) % n) * k + i;
    auto inner_ps = [&](double bytes) {
      return k > 1 ? t.ring_step_ps(inner_prev, r, inner_next, bytes) : 0.0;
    };
    auto outer_ps = [&](double bytes) {
      return n > 1 ? t.ring_step_ps(outer_prev, r, outer_next, bytes) : 0.0;
    };
    const double kv_ps = k > 1 ? (n - 1) * std::max(inner_ps(kv), outer_ps(kv)) +
                                     (n * (k - 1) - (n - 1)) * inner_ps(kv)
                               : (n - 1) * outer_ps(kv);
    double ps = shape.has_forward() ? kv_ps : 0.0;
    if (shape.has_backward()) ps += kv_ps + n * k * inner_ps(dkv) + n * outer_ps(dkv);
    worst_ps = std::max(worst_ps, ps);
  }
  return worst_ps;
}

// usp_schedule.hpp, P = u r, rank x = G u + h, no KV replication (u divides kv_heads): an
// all-to-all group in G (Q and KV of 1/u of a chunk to and from each other member), r-1 ring
// groups (the bundle: u KV objects of 1/u of a chunk, to (G+1, h), from (G-1, h)), an
// all-to-all group back (O in the output dtype). Ulysses alone is r = 1. Backward: an
// all-to-all of dO, the ring's r-1 KV groups and (r > 1) r dKV groups of the same bundles (as
// ring_passes.hpp), an all-to-all back of dQ (output dtype) and dKV (the partial dtype where
// it travelled the ring, r > 1, else the output's). A group's alone term is its largest
// object's, its GPU term all its objects'.
double usp_ps(const AttentionShape& shape, const ScheduleSpec& spec, int u, MakespanBound& bound) {
  const int p = spec.gpus;
  const int rings = p / u;
  const Transfers t(bound, {});
  const std::int64_t c = shape.seq_len / p;
  const double q = shape.q_bytes(c) / u, kv = shape.kv_bytes(c) / u,
               o = shape.o_output_bytes(c) / u;
  const double d_o = shape.d_o_bytes(c) / u, dq = shape.dq_output_bytes(c) / u,
               dkv = (rings > 1 ? shape.dkv_accumulator_bytes(c) : shape.dkv_output_bytes(c)) / u;
  // Ulysses over more than a node talks to every other rank: a sample of ranks, as pass-Q.
  const int bounded = u > spec.gpus_per_node ? sampled_ranks(spec) : p;
  double worst_ps = 0.0;
  for (int x = 0; x < bounded; ++x) {
    const int group = x / u, h = x % u;
    // One all-to-all group: to and from each other member, objects of `largest` and `sum`
    // bytes a peer.
    auto all_to_all_ps = [&](double largest, double sum) {
      double ps = t.gpu_ps(x, (u - 1) * sum, (u - 1) * sum);
      for (int m = 0; m < u; ++m) {
        const int peer = group * u + m;
        if (peer == x) continue;
        ps = std::max({ps, t.alone_ps(peer, x, largest), t.alone_ps(x, peer, largest)});
      }
      return ps;
    };
    // One ring group: a bundle of u objects of `bytes` to the next group, from the previous.
    auto ring_ps = [&](double bytes) {
      if (rings <= 1) return 0.0;
      const int prev = ((group + rings - 1) % rings) * u + h;
      const int next = ((group + 1) % rings) * u + h;
      return std::max(t.bundle_step_ps(prev, x, next, bytes, u), t.gpu_ps(x, u * bytes, u * bytes));
    };
    double ps = 0.0;
    if (shape.has_forward()) {
      ps +=
          all_to_all_ps(std::max(q, kv), q + kv) + (rings - 1) * ring_ps(kv) + all_to_all_ps(o, o);
    }
    if (shape.has_backward()) {
      ps += all_to_all_ps(d_o, d_o) + (rings - 1) * ring_ps(kv) + rings * ring_ps(dkv) +
            all_to_all_ps(std::max(dq, dkv), dq + dkv);
    }
    worst_ps = std::max(worst_ps, ps);
  }
  return worst_ps;
}

// mesh_schedule.hpp, the passes of shape.pass; nullopt where the generator would refuse the
// shape. Forward: a-1 Q groups, a-1 R groups, b-1 KV groups, each one ring step. Backward, m =
// max(a, b) - 1 gather groups then m reduce groups: gather group s holds Q ring step s (s < a-1:
// Q, dO, O and LSE of one chunk) and KV ring step s (s < b-1), reduce group s dQ ring step s
// (s < a-1) and dKV ring step s (s < b-1); the backward's rings are the forward's. A group takes
// at least the alone time of its largest transfer and its bytes over the GPU's link capacities.
std::optional<double> mesh_ps(const AttentionShape& shape, const ScheduleSpec& spec,
                              MakespanBound& bound) {
  const MeshTile tile{spec.tile_a, spec.tile_b};
  if (spec.tile_choice != MeshTileChoice::given || tile.a < 1 || tile.b < 1 ||
      tile.ranks() != spec.gpus) {
    return std::nullopt;
  }
  const std::int64_t c = shape.seq_len / tile.ranks();
  std::vector<int> placement;
  try {  // what make_mesh_plan would refuse is left to it, for its reason
    const MeshWindows windows = mesh_windows_for_budget(shape, tile, spec.memory_budget_bytes);
    greedy_mesh_order(tile.a, tile.b, shape.q_bytes(c), shape.kv_bytes(c), windows);
    placement = mesh_placement(tile, spec.placement);
  } catch (const ScheduleError&) {
    return std::nullopt;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  const Transfers t(bound, std::move(placement));
  const double q = shape.q_bytes(c), kv = shape.kv_bytes(c);
  // The R step moves O then LSE; the LSE is the smaller, so O's alone time is the step's.
  const double o = std::max(shape.o_accumulator_bytes(c), shape.lse_bytes(c));
  // The backward's Q side: what one Q ring step moves, its largest object and its sum.
  const double q_side_max = std::max({q, shape.d_o_bytes(c), o});
  const double q_side = q + shape.d_o_bytes(c) + shape.o_accumulator_bytes(c) + shape.lse_bytes(c);
  const double dq = shape.dq_accumulator_bytes(c), dkv = shape.dkv_accumulator_bytes(c);
  const int m = std::max(tile.a, tile.b) - 1;
  double worst_ps = 0.0;
  for (int r = 0; r < tile.ranks(); ++r) {
    auto q_step_ps = [&](double bytes) {
      return t.ring_step_ps(tile.q_prev(r), r, tile.q_next(r), bytes);
    };
    auto kv_step_ps = [&](double bytes) {
      return t.ring_step_ps(tile.kv_prev(r), r, tile.kv_next(r), bytes);
    };
    double ps = 0.0;
    if (shape.has_forward()) {
      ps += (tile.a - 1) * (q_step_ps(q) + q_step_ps(o)) + (tile.b - 1) * kv_step_ps(kv);
    }
    if (shape.has_backward() && m > 0) {
      // Groups where both rings step (s < min(a, b) - 1), then only the longer ring's.
      const int both = std::min(tile.a, tile.b) - 1;
      const bool q_longer = tile.a > tile.b;
      const double gather_both_ps =
          std::max({q_step_ps(q_side_max), kv_step_ps(kv), t.gpu_ps(r, q_side + kv, q_side + kv)});
      const double gather_one_ps =
          q_longer ? std::max(q_step_ps(q_side_max), t.gpu_ps(r, q_side, q_side))
                   : std::max(kv_step_ps(kv), t.gpu_ps(r, kv, kv));
      const double reduce_both_ps =
          std::max({q_step_ps(dq), kv_step_ps(dkv), t.gpu_ps(r, dq + dkv, dq + dkv)});
      const double reduce_one_ps = q_longer ? std::max(q_step_ps(dq), t.gpu_ps(r, dq, dq))
                                            : std::max(kv_step_ps(dkv), t.gpu_ps(r, dkv, dkv));
      ps += both * (gather_both_ps + reduce_both_ps) + (m - both) * (gather_one_ps + reduce_one_ps);
    }
    worst_ps = std::max(worst_ps, ps);
  }
  return worst_ps;
}

// The communication term of `spec`, or nullopt where no closed form applies.
std::optional<double> comm_floor_ps(const AttentionShape& shape, const ScheduleSpec& spec,
                                    MakespanBound& bound) {
  const std::string& kind = spec.kind;
  const int p = spec.gpus;
  const bool by_work = spec.balance == TokenBalance::work;
  if (kind == "ring" || kind == "zigzag" || kind == "striped") {
    if (by_work && kind == "ring") return std::nullopt;
    return ring_family_ps(shape, spec, bound);
  }
  if (kind == "pass_q") return pass_q_ps(shape, spec, bound);
  if (kind == "allgather_kv") {
    if (by_work) return std::nullopt;
    return allgather_kv_ps(shape, spec, bound);
  }
  if (kind == "double_ring") {
    const int k = spec.inner_ring > 0 ? spec.inner_ring : std::gcd(p, spec.gpus_per_node);
    if (k < 1 || p % k != 0) return std::nullopt;
    return double_ring_ps(shape, spec, k, bound);
  }
  if (kind == "usp" || kind == "ulysses") {
    const int u = kind == "ulysses" ? p : usp_ulysses_degree(shape, spec);
    if (u < 1 || p % u != 0 || shape.heads % u != 0 || shape.kv_heads % u != 0) {
      return std::nullopt;  // the generator's refusal, or KV replication: not in closed form
    }
    return usp_ps(shape, spec, u, bound);
  }
  if (kind == "mesh") return mesh_ps(shape, spec, bound);
  return std::nullopt;
}

}  // namespace

std::optional<double> shape_lower_bound_s(const AttentionShape& shape, const ScheduleSpec& spec,
                                          const CalibrationProfile& profile, MakespanBound& bound) {
  const int p = spec.gpus;
  const bool full = shape.mask.kind == AttentionMaskKind::full;
  const bool plain_causal = shape.mask.kind == AttentionMaskKind::causal;
  // What make_plan refuses (pass-Q has no backward), and masks that may empty chunk pairs (the
  // generators then move less than the closed forms): left to the plan.
  if (p < 1 || shape.heads <= 0 || shape.kv_heads <= 0 || shape.heads % shape.kv_heads != 0 ||
      (shape.has_backward() && spec.kind == "pass_q") || !(full || plain_causal) ||
      shape.seq_len % (plain_causal ? 2 * p : p) != 0) {
    return std::nullopt;
  }
  const std::optional<double> comm_ps = comm_floor_ps(shape, spec, bound);
  if (!comm_ps) return std::nullopt;
  return std::max({*comm_ps, compute_floor_ps(shape, spec, profile),
                   calls_floor_ps(shape, spec, profile)}) *
         1e-12;
}

double shape_compute_floor_s(const AttentionShape& shape, const ScheduleSpec& spec,
                             const CalibrationProfile& profile) {
  return compute_floor_ps(shape, spec, profile) * 1e-12;
}

std::optional<double> shape_cut_floor_s(const AttentionShape& shape, const ScheduleSpec& spec,
                                        const CalibrationProfile& profile, MakespanBound& bound) {
  if (spec.kind != "allgather_kv" || !shape_lower_bound_s(shape, spec, profile, bound)) {
    return std::nullopt;
  }
  const int p = spec.gpus;
  const double kv = shape.kv_bytes(shape.seq_len / p);
  std::map<int, int> ranks_on_node;  // rank r runs on GPU r (no placement for this schedule)
  for (int r = 0; r < p; ++r) ++ranks_on_node[bound.node_of_gpu(r)];
  double worst_ps = 0.0;
  // NCCL's ring brings each chunk of another node into a node once (then NVLink spreads it).
  for (const auto& [node, ranks] : ranks_on_node) {
    if (node < 0) continue;
    worst_ps = std::max(worst_ps, bound.node_in_ps(node, static_cast<double>(p - ranks) * kv));
  }
  return worst_ps * 1e-12;
}

}  // namespace tilesim
