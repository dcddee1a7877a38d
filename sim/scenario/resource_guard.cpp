#include "sim/scenario/resource_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <utility>

#include "sim/core/units.hpp"
#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/schedules/schedule_kinds.hpp"

namespace tilesim {
namespace {

// The squarest factorisations are not always cheapest (a costs more than b); try them all.
double mesh_ops(double p, int a, int b, bool forward, bool backward) {
  const double fa = a, fb = b;
  if (forward && backward) return p * std::max(1.0, 36 * fa + 18 * fb - 53);
  if (backward) return p * std::max(1.0, 20 * fa + 11 * fb - 30);
  return p * std::max(1.0, 17 * fa + 8 * fb - 26);
}

// A mesh rank's references (reads, writes, after), from its ops' bound: a fused call reads its
// Q and KV chunks and writes the partials of every query row it covers, which its correction
// then merges and frees, so the count follows the rows a call covers. The greedy interleaves Q
// and KV steps until the shorter side is in, so a KV chunk meets at most about min(a, b) rows:
// the min(a, b) b term. The coefficients are the smallest on a grid of 0.2 that bound the 96
// tiles a x b, a and b powers of 2 from 1 to 512, 2 <= ab <= 65536, in each pass: within 43%
// (forward), 27% (backward) and 26% (both) from 8 GPUs, 80% below (tests/test_resource_guard.cpp
// checks the tiles up to 512 GPUs and four of 2048).
double mesh_refs_per_rank(int a, int b, bool forward, bool backward) {
  const double fa = a, fb = b, ab = fa * fb, shorter_b = std::min(fa, fb) * fb;
  const double ops = mesh_ops(1.0, a, b, forward, backward);
  if (forward && backward) return ops + 8.0 * ab + 8.6 * shorter_b + 4 * (fa + fb);
  if (backward) return ops + 6.0 * ab + 2.0 * shorter_b + 2 * (fa + fb);
  return ops + 1.2 * ab + 7.6 * shorter_b + 2 * (fa + fb);
}

double memory_of(const PlanSize& s) {
  return kSimBaseBytes + kSimBytesPerOp * s.ops + kSimBytesPerObject * s.objects +
         kSimBytesPerFlow * s.flows + kSimBytesPerRoute * s.routes + kSimBytesPerPair * s.pairs +
         kSimBytesPerMeshRef * s.mesh_refs;
}

int usp_degree(const AttentionShape& shape, const ScheduleSpec& spec) {
  if (spec.kind == "ulysses") return std::max(1, spec.gpus);
  int u = spec.ulysses_degree;
  if (u < 1) {
    try {
      u = usp_ulysses_degree(shape, spec);
    } catch (const std::exception&) {
      u = 1;  // the generator reports the bad shape
    }
  }
  return std::max(1, u);
}

}  // namespace

// Per rank (P ranks, every program alike but the mesh's), u = Ulysses degree, r = P / u:
//   ring, zigzag, striped  ops 6P - 5 / 9P - 5 / 15P - 10 (forward / backward / both);
//                          objects 4P / 7P (Q, KV, O, LSE (dO, dQ, dKV) per chunk); flows 1,
//                          routes 1
//   double_ring (n = P / inner rings)  the ring's, backward + 3n ops when n >= 2; flows and
//                          routes 2 when n >= 2
//   allgather_kv           NCCL's rings (full and causal masks over the layout's chunks,
//                          allgather_kv_uses_nccl_ring; + 3 per part past the first where the
//                          call splits, from 65535 GPUs): ops 3P - 2 / 8P - 7 / 11P - 9, flows
//                          and routes 1; else grouped send/recv: ops 3P - 2 / 7P - 5 / 10P - 7,
//                          flows and routes P - 1; objects 4P, with a backward 7P + P (P - 1)
//                          (dKV[j]@r; NCCL's rings: 7P + R P + P - 2R)
//   pass_q                 ops 13P - 12; objects 8P (O[i]@peer, LSE[i]@peer: two per chunk,
//                          pass_q_member.hpp); flows 2
//                          (O and LSE), routes P - 1
//   usp, r >= 2            ops (3u + 3) r + 6u - 11 / (6u + 3) r + 9u - 14 / (9u + 6) r + 12u
//                          - 22; objects 4Pu / 7Pu (chunks split in u head groups); flows
//                          2 (u - 1) (Q and KV to every member), routes u
//   ulysses (u = P, r = 1) ops 9P - 8 / 12P - 11 / 18P - 16, + 3 (ceil(P^2 / 65535) - 1) a
//                          pass (calls split at 65535 pairs); objects 4P^2 / 7P^2; flows
//                          2 (P - 1), routes P - 1
//   mesh a x b             ops (bound) as mesh_ops / P; objects (bound) 4P + 2R (2a - 1)
//                          forward, 7P + min(P, R + a) (a + b - 2) + R (a + b) backward, both
//                          the sum less 4P; flows 2 forward, 5 with a backward; routes 2;
//                          references
//                          (bound) as mesh_refs_per_rank
// with R = `programs` (P for the full plan); pairs R P per pass, R P u for usp and ulysses.
// A correction that is not fused adds one block partial per accumulator object (O, LSE, dQ,
// dKV, output_correction.hpp): the accumulators above (2 of the 4 per chunk, 4 of the 7, and
// every @ partial); the mesh's bound doubles.
PlanSize plan_size(const AttentionShape& shape, const ScheduleSpec& spec, int programs) {
  if (spec.kind == "mesh" && (spec.tile_a < 1 || spec.tile_b < 1)) {
    // A tile chosen later (auto, min-bytes): the one whose plan needs the least memory, so the
    // guard never refuses what some tile could fit.
    const int gpus = std::max(1, spec.gpus);
    PlanSize least;
    double least_bytes = std::numeric_limits<double>::infinity();
    for (int a = 1; a <= gpus; ++a) {
      if (gpus % a != 0) continue;
      ScheduleSpec tiled = spec;
      tiled.tile_a = a;
      tiled.tile_b = gpus / a;
      const PlanSize s = plan_size(shape, tiled, programs);
      if (const double bytes = memory_of(s); bytes < least_bytes) {
        least_bytes = bytes;
        least = s;
      }
    }
    return least;
  }
  const double p = std::max(1, spec.gpus);
  const double k = programs > 0 ? std::min<double>(programs, p) : p;
  const bool fwd = shape.has_forward();
  const bool bwd = shape.has_backward();
  const bool both = fwd && bwd;
  const std::string& kind = spec.kind;
  PlanSize s;
  double rank_ops = 0.0, flows = 1.0, routes = 1.0, accumulators = 0.0;
  if (kind == "mesh") {
    const int a = spec.tile_a, b = spec.tile_b;
    const double fa = a, fb = b;
    rank_ops = mesh_ops(p, a, b, fwd, bwd) / p;
    s.mesh_refs = k * mesh_refs_per_rank(a, b, fwd, bwd);
    s.objects = 0.0;
    if (fwd) s.objects += 4 * p + 2 * k * (2 * fa - 1);
    // The backward's dQ, dKV partials (a + b - 2 a rank) of the ranks the programs name: the
    // R programs' and the KV ring's predecessors of the first row (a), every rank's in a whole
    // plan.
    if (bwd) {
      s.objects +=
          7 * p + std::min(p, k + fa) * (fa + fb - 2) + k * (fa + fb) - (both ? 4 * p : 0.0);
    }
    accumulators = s.objects;  // a bound: at most every object
    flows = bwd ? 5 : 2;
    routes = 2;
  } else if (kind == "allgather_kv") {
    // dKV[j]@r: every pair (r != j) in the grouped form; NCCL's rings make the programs' own
    // (R per chunk, less the R diagonals) and the running sums' starts (j, j + 1) beyond them
    // (P - R): R P + P - 2R, P (P - 1) for the whole plan.
    const bool ring = allgather_kv_uses_nccl_ring(shape, spec.balance == TokenBalance::work);
    const double partials = ring ? k * p + p - 2 * k : p * (p - 1);
    s.objects = bwd ? 7 * p + partials : 4 * p;
    accumulators = bwd ? 4 * p + partials : 2 * p;
    if (ring) {
      // NCCL's rings: the reduce-scatter's P - 1 steps are a send, a recv, a merge and two
      // frees each; one send a step, to r + 1.
      rank_ops = both ? 11 * p - 9 : bwd ? 8 * p - 7 : 3 * p - 2;
      flows = routes = 1;
    } else {
      rank_ops = both ? 10 * p - 7 : bwd ? 7 * p - 5 : 3 * p - 2;
      flows = routes = p - 1;
    }
    // The one call a pass reads P + 1 objects (forward: Q and every KV) or P + 4 (backward); an
    // op counts references in 16 bits, so from 65535 GPUs on it splits (FusingBuilder), each
    // part past the first a call, a merge and a free.
    const auto parts = [](double refs) { return std::ceil(refs / 65535.0) - 1; };
    if (fwd) rank_ops += 3 * parts(p + 1);
    if (bwd) rank_ops += 3 * parts(p + 4);
  } else if (kind == "pass_q") {
    rank_ops = 13 * p - 12;
    s.objects = 8 * p;
    accumulators = 6 * p;
    flows = 2;
    routes = p - 1;
  } else if (kind == "ulysses") {
    rank_ops = both ? 18 * p - 16 : bwd ? 12 * p - 11 : 9 * p - 8;
    // A rank's one call per pass covers P^2 chunk pairs; an op holds at most 65535
    // (Op::pair_count), so from 256 GPUs on it splits, 3 more ops (call, merge, free) a part.
    rank_ops += (both ? 2 : 1) * 3 * (std::ceil(p * p / 65535.0) - 1);
    s.objects = (bwd ? 7 : 4) * p * p;
    accumulators = (bwd ? 4 : 2) * p * p;
    flows = 2 * (p - 1);
    routes = p - 1;
  } else if (kind == "usp") {
    const double u = usp_degree(shape, spec);
    const double r = p / u;
    // r = 1 is Ulysses, whose counts these bound.
    rank_ops = both  ? (9 * u + 6) * r + 12 * u - 22
               : bwd ? (6 * u + 3) * r + 9 * u - 14
                     : (3 * u + 3) * r + 6 * u - 11;
    s.objects = (bwd ? 7 : 4) * p * u;
    accumulators = (bwd ? 4 : 2) * p * u;
    flows = std::max(1.0, 2 * (u - 1));
    routes = u;
  } else {  // the ring family, double_ring and any other: the ring's
    rank_ops = both ? 15 * p - 10 : bwd ? 9 * p - 5 : 6 * p - 5;
    s.objects = bwd ? 7 * p : 4 * p;
    accumulators = bwd ? 4 * p : 2 * p;
    if (kind == "double_ring") {
      const int inner = spec.inner_ring > 0 ? spec.inner_ring
                                            : std::gcd(spec.gpus, std::max(1, spec.gpus_per_node));
      const double n = p / std::max(1, inner);
      if (bwd && n >= 2) rank_ops += 3 * n;
      flows = routes = n >= 2 ? 2 : 1;  // one inner ring is a ring
    }
  }
  if (spec.correction != Correction::fused) s.objects += accumulators;
  // Every (query chunk, key chunk) pair of a head group is computed once per pass, by one
  // rank; chunks split in u head groups (Ulysses, USP) give u P^2 pairs.
  const double head_groups = kind == "ulysses" || kind == "usp" ? usp_degree(shape, spec) : 1.0;
  s.pairs = (both ? 2.0 : 1.0) * head_groups * p * p * k / p;
  s.ops = k * std::max(1.0, rank_ops);
  s.flows = k * flows;
  s.routes = k * routes;
  return s;
}

PlanEstimate estimate_plan(const AttentionShape& shape, const ScheduleSpec& spec) {
  const PlanSize s = plan_size(shape, spec);
  PlanEstimate e;
  e.ops = s.ops;
  e.memory_bytes = memory_of(s);
  e.sim_s = kSimSecondsPerOp * e.ops;
  return e;
}

PlanEstimate estimate_symmetric_plan(const AttentionShape& shape, const ScheduleSpec& spec,
                                     int classes, double window_ops_per_class) {
  const PlanSize q = plan_size(shape, spec, std::max(1, classes));
  // The search looked at every rank's peers: the full plan's routes. Pass-Q's and all-gather
  // KV's walks them by destination without keeping any.
  const double searched = plan_size(shape, spec).routes;
  const double search_bytes_per_pair = spec.kind == "pass_q" || spec.kind == "allgather_kv"
                                           ? kSearchBytesPerStreamedPair
                                           : kSearchBytesPerPair;
  PlanEstimate e;
  e.ops = q.ops;
  e.sim_s = kSimSecondsPerOp * e.ops;
  PlanSize held = q;
  if (window_ops_per_class > 0) {
    held.ops = window_ops_per_class * std::max(1, classes);
    held.pairs = q.pairs * std::min(1.0, held.ops / q.ops);  // the window's share
    held.mesh_refs = q.mesh_refs * std::min(1.0, held.ops / q.ops);
  }
  e.memory_bytes = memory_of(held) + search_bytes_per_pair * searched +
                   (window_ops_per_class > 0 ? kWindowedBytesPerGpu : kQuotientBytesPerGpu) *
                       std::max(1, spec.gpus);
  return e;
}

double default_max_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0.0;
    if (fields >> key >> kib && key == "MemTotal:" && kib > 0) return 0.5 * kib * 1024.0;
  }
  return 8e9;
}

std::string resource_violation(const AttentionShape& shape, const ScheduleSpec& spec,
                               const ResourceLimits& limits) {
  const double max_memory =
      limits.max_memory_bytes > 0 ? limits.max_memory_bytes : default_max_memory_bytes();
  const auto fits = [&](const PlanEstimate& e) {
    return e.memory_bytes <= max_memory && (limits.max_ops <= 0 || e.ops <= limits.max_ops);
  };
  const PlanEstimate e = estimate_plan(shape, spec);
  if (fits(e)) return {};
  const bool memory = e.memory_bytes > max_memory;
  const std::string passed =
      memory ? fmt::format("--max-memory {}{}", format_bytes(max_memory),
                           limits.max_memory_bytes > 0 ? "" : " (default: half of this machine's)")
             : fmt::format("--max-ops {:.3g}", limits.max_ops);
  // The largest GPU count of the same schedule that fits (op counts grow with P). A mesh tile
  // is the user's to change, so it is left automatic for the smaller counts.
  ScheduleSpec smaller = spec;
  if (spec.kind == "mesh") smaller.tile_a = smaller.tile_b = 0;
  int lo = 0, hi = spec.gpus;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    smaller.gpus = mid;
    (fits(estimate_plan(shape, smaller)) ? lo : hi) = mid;
  }
  const std::string advice =
      lo >= 1 ? fmt::format("at most {} GPUs would fit", lo) : std::string("no GPU count fits");
  return fmt::format(
      "a plan this machine can hold: {} on {} GPUs is about {:.3g} ops, {} of memory and {} of "
      "simulation (estimated from the shape, sim/scenario/resource_guard.hpp), beyond {}; {}, "
      "or raise {}",
      spec.kind, spec.gpus, e.ops, format_bytes(e.memory_bytes), format_time_s(e.sim_s), passed,
      advice, memory ? "--max-memory" : "--max-ops");
}

}  // namespace tilesim
