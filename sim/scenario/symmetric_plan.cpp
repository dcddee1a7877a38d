#include "sim/scenario/symmetric_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "sim/core/units.hpp"
#include "sim/model/collective_lanes.hpp"
#include "sim/model/compute_model.hpp"
#include "sim/model/rank_group_symmetry.hpp"
#include "sim/model/rank_roles.hpp"
#include "sim/plan/output_correction.hpp"
#include "sim/scenario/lazy_plan.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/schedules/double_ring_schedule.hpp"
#include "sim/schedules/mesh_fold.hpp"
#include "sim/schedules/mesh_placement.hpp"
#include "sim/schedules/mesh_schedule.hpp"
#include "sim/schedules/pass_q_schedule.hpp"
#include "sim/schedules/pass_q_source.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/schedules/schedule_kinds.hpp"
#include "sim/schedules/usp_schedule.hpp"

namespace tilesim {

std::optional<ChunkOwnership> ring_ownership(const ScheduleSpec& spec) {
  if (spec.balance == TokenBalance::work) return std::nullopt;
  if (spec.kind == "ring") return ChunkOwnership::contiguous;
  if (spec.kind == "zigzag") return ChunkOwnership::zigzag;
  if (spec.kind == "striped") return ChunkOwnership::striped;
  return std::nullopt;
}

namespace {

// The mesh tile the scenario runs, where it is known before tuning (given, or the fewest
// bytes); nullopt for another schedule or a tile chosen by simulating the candidates.
std::optional<MeshTile> known_mesh_tile(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  if (spec.kind != "mesh") return std::nullopt;
  if (spec.tile_choice == MeshTileChoice::given) {
    // A tile of another size is an error the generator names (make_mesh_plan).
    if (spec.tile_a < 1 || spec.tile_b < 1 || spec.tile_a * spec.tile_b != spec.gpus) {
      return std::nullopt;
    }
    return MeshTile{spec.tile_a, spec.tile_b};
  }
  if (spec.tile_choice == MeshTileChoice::min_bytes) {
    return fewest_bytes_tile(scenario.attention, spec.gpus);
  }
  return std::nullopt;
}

// The mesh's peers: Q and R rings to q_next, KV ring to kv_next (mesh_tile.hpp), in the plan's
// numbering of its ranks (mesh_placement.hpp); its programs are equivariant under shifts by
// whole Q-groups (multiples of a, which move tr and keep tc), or, numbered by column, by whole
// KV-groups (multiples of b: tc + 1 mod a).
ShiftSearch mesh_search(const Scenario& scenario, MeshTile tile) {
  const ScheduleSpec& spec = scenario.schedule;
  MeshNumbering numbering = mesh_numbering(tile, spec.placement, spec.gpus_per_node);
  ShiftSearch search;
  search.peers.resize(static_cast<std::size_t>(tile.ranks()));
  for (int g = 0; g < tile.ranks(); ++g) {
    search.peers[static_cast<std::size_t>(numbering.rank_of(tile, g))] = {
        numbering.rank_of(tile, tile.q_next(g)), numbering.rank_of(tile, tile.kv_next(g))};
  }
  search.shift_allowed = [step = tile.rank_shift(numbering.by_column)](int k) {
    return k % step == 0;
  };
  search.placement = std::move(numbering.placement);
  return search;
}

// The mesh under the full mask: the fold by rows and columns (mesh_fold.hpp) with the fewest
// classes, fewer than `below`, that the fabric keeps (rank_group_symmetry.hpp), else nullopt.
// Its class_of_rank maps the plan's numbering (mesh_placement.hpp) onto the fold's classes.
std::optional<RingSymmetry> mesh_fold_symmetry(const Scenario& scenario, const Topology& topology,
                                               Router& router, int below) {
  const std::optional<MeshTile> tile = known_mesh_tile(scenario);
  if (!tile || scenario.attention.mask.kind != AttentionMaskKind::full) return std::nullopt;
  const ScheduleSpec& spec = scenario.schedule;
  const int p = tile->ranks();
  const std::vector<int> gpu_of_position = mesh_placement(*tile, spec.placement);
  for (const MeshFold fold : mesh_fold_candidates(*tile)) {
    if (fold.classes() >= below) break;
    const std::vector<int> rho = mesh_fold_ranks(*tile, fold);
    RankGroupSearch search;
    search.classes = fold.classes();
    search.placement.resize(static_cast<std::size_t>(p));
    search.peers.resize(static_cast<std::size_t>(p));
    for (int g = 0; g < p; ++g) {
      const auto r = static_cast<std::size_t>(rho[static_cast<std::size_t>(g)]);
      search.placement[r] =
          gpu_of_position.empty() ? g : gpu_of_position[static_cast<std::size_t>(g)];
      search.peers[r] = {rho[static_cast<std::size_t>(tile->q_next(g))],
                         rho[static_cast<std::size_t>(tile->kv_next(g))]};
    }
    search.generators = mesh_fold_generators(*tile, fold);
    std::optional<RingSymmetry> sym = find_rank_group_symmetry(topology, router, search);
    if (!sym) continue;
    sym->mesh_fold = std::array<int, 2>{fold.x, fold.y};
    const MeshNumbering numbering = mesh_numbering(*tile, spec.placement, spec.gpus_per_node);
    sym->class_of_rank.resize(static_cast<std::size_t>(p));
    for (int g = 0; g < p; ++g) {
      sym->class_of_rank[static_cast<std::size_t>(numbering.rank_of(*tile, g))] =
          rho[static_cast<std::size_t>(g)] % fold.classes();
    }
    return sym;
  }
  return std::nullopt;
}

// The shift quotient, or the mesh's fold where that has fewer classes (compute cores shared by
// a node's ranks keep the shift's, whose blocks are whole nodes).
RingSymmetry exact_symmetry(const Scenario& scenario, const Topology& topology,
                            ShiftSearch search) {
  const bool cores_shared = search.node_cores_shared;
  Router router(topology);  // the fold routes the same pairs as the shift
  RingSymmetry shift = find_rank_shift_symmetry(topology, router, std::move(search));
  if (cores_shared) return shift;
  std::optional<RingSymmetry> fold = mesh_fold_symmetry(scenario, topology, router, shift.classes);
  return fold ? std::move(*fold) : std::move(shift);
}

// The double ring's inner ring size (schedule_kinds.cpp's default), 0 for another schedule.
int double_ring_inner(const ScheduleSpec& spec) {
  return spec.kind == "double_ring" ? double_ring_inner_size(spec) : 0;
}

// The double ring's peers: inner and outer successors (double_ring_schedule.hpp); its
// programs are equivariant under shifts by whole inner rings.
ShiftSearch double_ring_search(int ranks, int inner) {
  ShiftSearch search;
  search.peers.resize(static_cast<std::size_t>(ranks));
  const int nodes = ranks / inner;
  for (int r = 0; r < ranks; ++r) {
    const int node = r / inner, i = r % inner;
    search.peers[static_cast<std::size_t>(r)] = {node * inner + (i + 1) % inner,
                                                 ((node + 1) % nodes) * inner + i};
  }
  search.shift_allowed = [inner](int k) { return k % inner == 0; };
  return search;
}

// USP's peers: the other members of its Ulysses group (all-to-all, in the exchange's order)
// and the same head group's member of the next group (ring, usp_schedule.hpp); its programs
// are equivariant under shifts by whole Ulysses groups.
ShiftSearch usp_search(int ranks, int u) {
  ShiftSearch search;
  search.peers.resize(static_cast<std::size_t>(ranks));
  const int groups = ranks / u;
  for (int x = 0; x < ranks; ++x) {
    const int group = x / u, h = x % u;
    std::vector<int>& peers = search.peers[static_cast<std::size_t>(x)];
    for (int t = 1; t < u; ++t) peers.push_back(group * u + (h + t) % u);
    peers.push_back(((group + 1) % groups) * u + h);
  }
  search.shift_allowed = [u](int k) { return k % u == 0; };
  return search;
}

// Schedules in which every rank sends to every other, simulated as an offset quotient
// (class_plan.hpp keep_class_programs): pass-Q (forward only: it has no backward), all-gather KV
// owned by the layout (by work, chunks differ in size). 0 for another schedule, else the step
// the shifts must be a multiple of (1: every shift).
int all_peers_shift_step(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  const AttentionShape& a = scenario.attention;
  if (spec.kind == "pass_q") return a.has_backward() ? 0 : 1;
  if (spec.kind == "allgather_kv") return spec.balance == TokenBalance::layout ? 1 : 0;
  // Not ulysses: its quotient's result differed from the full simulation (peak memory at 256
  // GPUs; a causal run at 64): its programs list the head chunks by absolute index, not by
  // offset, so rank x + K's program need not be x's shifted (docs/design-notes.md).
  return 0;
}

// A search over peers by offset r + t, t = 1..offsets, shifts a multiple of `step`.
ShiftSearch offset_search(int ranks, int offsets, int step, const CalibrationProfile& profile) {
  ShiftSearch search;
  search.peers.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    std::vector<int>& peers = search.peers[static_cast<std::size_t>(r)];
    peers.reserve(static_cast<std::size_t>(offsets));
    for (int t = 1; t <= offsets; ++t) peers.push_back((r + t) % ranks);
  }
  search.shift_allowed = [step](int k) { return k % step == 0; };
  search.node_cores_shared = profile.compute_cores > 0;
  search.peers_by_offset = true;
  return search;
}

// Every rank's peers are all the others, by offset r + t, t = 1..P-1 (the exchanges' order;
// pass-Q's Q successor r + 1 and partial owners r - s are the same set): a shift by K is a
// symmetry when it maps the routes between every pair of ranks onto each other.
RankShiftSymmetry all_peers_symmetry(int ranks, int step, const Topology& topology,
                                     const CalibrationProfile& profile, int max_classes = 0) {
  ShiftSearch search = offset_search(ranks, ranks - 1, step, profile);
  search.max_classes = max_classes;
  return find_rank_shift_symmetry(topology, std::move(search));
}

// The same search over each rank's ring successor r + 1 alone. Those routes are a subset of
// all_peers_symmetry's, so every shift that maps all pairs' routes onto each other maps these
// too: its classes are a lower bound on all_peers_symmetry's, from P routes, not P (P - 1).
RankShiftSymmetry ring_peer_symmetry(int ranks, int step, const Topology& topology,
                                     const CalibrationProfile& profile) {
  return find_rank_shift_symmetry(topology, offset_search(ranks, 1, step, profile));
}

// All-gather KV as NCCL's rings (allgather_kv_uses_nccl_ring): every transfer of the plan goes
// to the ring successor r + 1, split over the lanes of the sender's node (collective_lanes.hpp).
// The role quotient's search: that one peer, by offset (the quotient keeps its full peers), with
// the lanes; nullopt for another schedule or form.
std::optional<ShiftSearch> collective_ring_search(const Scenario& scenario,
                                                  const Topology& topology,
                                                  const CalibrationProfile& profile) {
  const ScheduleSpec& spec = scenario.schedule;
  if (spec.kind != "allgather_kv" || spec.balance != TokenBalance::layout ||
      !allgather_kv_uses_nccl_ring(scenario.attention, false) || spec.gpus > topology.gpu_count()) {
    return std::nullopt;
  }
  ShiftSearch search = offset_search(spec.gpus, 1, 1, profile);
  std::vector<int> placement(static_cast<std::size_t>(spec.gpus));
  std::iota(placement.begin(), placement.end(), 0);
  search.collective_lanes_by_gpu = collective_lanes(placement, spec.gpus, topology);
  return search;
}

// schedule.symmetry, checked by load_scenario to be auto, exact, roles or off; absent is auto.
std::string symmetry_mode(const Scenario& scenario) {
  const YAML::Node doc = scenario.document;
  if (!doc.IsMap() || !doc["schedule"] || !doc["schedule"].IsMap()) return "auto";
  const YAML::Node key = doc["schedule"]["symmetry"];
  return key && key.IsScalar() ? key.Scalar() : "auto";
}

bool symmetry_is(const Scenario& scenario, std::string_view value) {
  return symmetry_mode(scenario) == value;
}

}  // namespace

bool symmetry_switched_off(const Scenario& scenario) { return symmetry_is(scenario, "off"); }

namespace {

// The peers and shifts of a schedule with a peer-shift quotient (ring family, mesh with a
// known tile, double ring, USP of two or more groups); nullopt for pass-Q, all-gather KV and
// the others.
std::optional<ShiftSearch> peer_search(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  if (const std::optional<MeshTile> tile = known_mesh_tile(scenario)) {
    return mesh_search(scenario, *tile);
  }
  if (const int inner = double_ring_inner(spec); inner > 0 && spec.gpus % inner == 0) {
    return double_ring_search(spec.gpus, inner);
  }
  if (const int u = usp_shift_degree(scenario); u > 0) return usp_search(spec.gpus, u);
  if (ring_ownership(spec)) return ring_shift_search(spec.gpus);
  return std::nullopt;
}

// schedule.symmetry: roles (rank_roles.hpp): an exact shift no larger than the role quotient's
// blocks where there is one, else the role quotient; nullopt with `why_not` where it does not
// apply. The routes are ranked by a KV chunk of seq_len / P tokens (what the ring family moves
// a step).
std::optional<RingSymmetry> roles_of(const Scenario& scenario, const ShiftSearch& search,
                                     const Topology& topology, std::string& why_not) {
  const AttentionShape& a = scenario.attention;
  return find_rank_roles(topology, search, a.kv_bytes(a.seq_len / scenario.schedule.gpus), why_not);
}

std::optional<RingSymmetry> role_symmetry(const Scenario& scenario, ShiftSearch search,
                                          const Topology& topology, std::string& why_not) {
  std::optional<RingSymmetry> roles = roles_of(scenario, search, topology, why_not);
  // Exact where a shift no larger than a node's ranks (or the role blocks) folds the run, or
  // the mesh's fold, no larger either and smaller than the shift's.
  const int most = roles ? roles->classes : topology.gpus_per_node;
  search.max_classes = most;
  const bool cores_shared = search.node_cores_shared;
  Router router(topology);
  RingSymmetry exact = find_rank_shift_symmetry(topology, router, std::move(search));
  if (!cores_shared) {
    if (std::optional<RingSymmetry> fold =
            mesh_fold_symmetry(scenario, topology, router, std::min(most + 1, exact.classes))) {
      return fold;
    }
  }
  if (exact.exact()) return exact;
  return roles;
}

// All-gather KV's NCCL rings (collective_ring_search) under auto or roles: the exact all-peers
// quotient where it is small (auto: at most kAutoExactCollectiveClasses classes; roles: no larger
// than the role blocks), else the role quotient where its checks hold, else the exact quotient. The
// exact search routes every pair of ranks (P (P - 1) routes streamed), so it runs only where
// the successors' search, a lower bound on its classes, leaves room.
SymmetryChoice collective_ring_choice(const Scenario& scenario, const ShiftSearch& ring,
                                      const Topology& topology, const CalibrationProfile& profile,
                                      int step) {
  SymmetryChoice choice;
  const int p = scenario.schedule.gpus;
  const bool by_auto = symmetry_is(scenario, "auto");
  std::string why_not;
  std::optional<RingSymmetry> roles = roles_of(scenario, ring, topology, why_not);
  const int exact_limit = by_auto ? kAutoExactCollectiveClasses : roles ? roles->classes : 0;
  if (exact_limit > 0 && ring_peer_symmetry(p, step, topology, profile).classes <= exact_limit) {
    RingSymmetry exact = all_peers_symmetry(p, step, topology, profile, exact_limit);
    if (exact.exact()) {
      choice.symmetry = std::move(exact);
      return choice;
    }
  }
  if (roles) {
    if (by_auto) {
      choice.warning = fmt::format(
          "schedule.symmetry: auto simulated the approximate role quotient: the exact shift "
          "quotient has more than {} classes (schedule.symmetry: exact runs it, slower)",
          kAutoExactCollectiveClasses);
    }
    choice.symmetry = std::move(roles);
    return choice;
  }
  if (!by_auto) {
    choice.warning = "schedule.symmetry: roles not applied (" + why_not +
                     "): simulated with the exact quotient where one exists";
  }
  choice.symmetry = all_peers_symmetry(p, step, topology, profile);
  return choice;
}

}  // namespace

int usp_shift_degree(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  if (spec.kind != "usp") return 0;
  const AttentionShape& a = scenario.attention;
  const int u = usp_ulysses_degree(a, spec);
  const bool accepted = u >= 1 && spec.gpus % u == 0 && a.heads % u == 0 &&
                        (a.kv_heads % u == 0 || u % a.kv_heads == 0);
  return accepted && spec.gpus / u >= 2 ? u : 0;
}

bool work_block_applies(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  // The contiguous ring: its causal work grows with the rank (max/mean -> 2), and its heaviest
  // block, which computes at almost every step, sets the pace of the ring that every lighter
  // rank only forwards on (the quotient was within 0.7% of every rank at 64 to 1024 GPUs,
  // 1M and 4M tokens); its compute balance, the figure a user asks of it, is counted from
  // every rank's FLOPs (heaviest_end_block).
  // The double ring lays a causal mask out over zigzag chunks (double_ring_layout): each rank
  // meets every chunk once, so its calls are the zigzag ring's two shapes in another order.
  // All-gather KV lays a causal mask out over zigzag chunks too (build_allgather_kv): its one
  // call per rank has the same work on every rank. USP of two or more Ulysses groups too
  // (make_grid_plan): its ring over the groups is the zigzag ring's, so group G runs G calls of
  // one shape and r - 1 - G of the other.
  // Not pass-Q, whose ranks run the zigzag ring's two call shapes transposed: under the causal
  // mask it is communication-bound, and each step's comm group waits for the partial from rank
  // r + s, which runs its steps' shapes in another order; out of phase, ranks wait on each
  // other far more than one block run in phase does (the quotient was 19% short of every rank
  // at 64 GPUs, 1M tokens, and 31% at 256 GPUs, 4M: docs/design-notes.md).
  const std::optional<ChunkOwnership> ownership = ring_ownership(spec);
  const int inner = double_ring_inner(spec);
  const bool block_quotient = ownership.has_value() || (inner > 0 && spec.gpus % inner == 0) ||
                              usp_shift_degree(scenario) > 0 || spec.kind == "mesh" ||
                              (spec.kind == "allgather_kv" && spec.balance == TokenBalance::layout);
  if (!block_quotient || scenario.attention.mask.kind != AttentionMaskKind::causal ||
      scenario.job || spec.gpus < 4) {
    return false;
  }
  return symmetry_is(scenario, "roles") ||
         (symmetry_is(scenario, "auto") && spec.gpus > kAutoExactWorkRanks);
}

bool symmetry_applies(const Scenario& scenario) {
  const AttentionShape& a = scenario.attention;
  const bool schedule_shifts =
      ring_ownership(scenario.schedule).has_value() || known_mesh_tile(scenario).has_value() ||
      (double_ring_inner(scenario.schedule) > 0 &&
       scenario.schedule.gpus % double_ring_inner(scenario.schedule) == 0) ||
      usp_shift_degree(scenario) > 0 || all_peers_shift_step(scenario) > 0;
  // Forward, backward or both: every one of these generators has a backward whose peers are
  // its forward's (pass-Q has no backward).
  return schedule_shifts && !scenario.job &&
         (a.mask.kind == AttentionMaskKind::full || work_block_applies(scenario)) &&
         scenario.schedule.gpus >= 4 && !symmetry_switched_off(scenario);
}

bool searched_mesh_tiles_symmetric(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  if (spec.kind != "mesh" || spec.tile_choice != MeshTileChoice::fastest || spec.gpus < 1) {
    return false;
  }
  Scenario tiled = scenario;
  tiled.schedule.tile_choice = MeshTileChoice::given;
  tiled.schedule.tile_a = 1;
  tiled.schedule.tile_b = spec.gpus;
  return symmetry_applies(tiled);
}

namespace {

SymmetryChoice choose_shift_symmetry(const Scenario& scenario, const Topology& topology,
                                     const CalibrationProfile& profile) {
  SymmetryChoice choice;
  std::optional<ShiftSearch> search = peer_search(scenario);
  if (search) search->node_cores_shared = profile.compute_cores > 0;
  if (const std::optional<ShiftSearch> ring = collective_ring_search(scenario, topology, profile);
      ring && symmetry_applies(scenario) && !symmetry_is(scenario, "exact")) {
    return collective_ring_choice(scenario, *ring, topology, profile,
                                  all_peers_shift_step(scenario));
  }
  if (symmetry_is(scenario, "roles")) {
    std::string declined;
    if (!search && scenario.schedule.balance == TokenBalance::work) {
      declined = "balance: work deals ranks unequal work";
    } else if (!search) {
      declined = fmt::format(
          "{} has no peer-shift quotient (roles: ring, zigzag, striped, usp, double_ring, mesh "
          "with a tile, allgather_kv as NCCL's rings)",
          scenario.schedule.kind);
    } else if (!symmetry_applies(scenario)) {
      declined =
          "roles needs the full mask (or a causal one on ring, zigzag, striped, double ring, USP, "
          "mesh or all-gather KV) and one CP group (no job)";
    } else {
      choice.symmetry = role_symmetry(scenario, *search, topology, declined);
    }
    // Declined, the run is exact's, with a node's shift where role_symmetry found one.
    if (!declined.empty()) {
      choice.warning = "schedule.symmetry: roles not applied (" + declined +
                       "): simulated with the exact quotient where one exists";
    }
    if (choice.symmetry) return choice;
  }
  if (!symmetry_applies(scenario)) return choice;
  if (search) {
    if (!symmetry_is(scenario, "auto")) {
      choice.symmetry = exact_symmetry(scenario, topology, std::move(*search));
      return choice;
    }
    // auto: the exact quotient where it is small, else the role quotient where it applies
    // (one exact search, which routes every rank's peers: 2 s of a mesh on 16384 GPUs).
    const ShiftSearch for_roles = *search;
    choice.symmetry = exact_symmetry(scenario, topology, std::move(*search));
    if (choice.symmetry->classes <= kAutoExactClasses) return choice;
    std::string why_not;
    std::optional<RingSymmetry> roles = roles_of(scenario, for_roles, topology, why_not);
    if (const int exact_classes = choice.symmetry->classes;
        roles && roles->classes < exact_classes) {
      choice.symmetry = std::move(roles);
      choice.warning = fmt::format(
          "schedule.symmetry: auto simulated the approximate role quotient: the exact shift "
          "quotient has {} classes, more than {} (schedule.symmetry: exact runs it, slower)",
          exact_classes, kAutoExactClasses);
    }
    return choice;
  } else if (const int step = all_peers_shift_step(scenario); step > 0) {
    choice.symmetry = all_peers_symmetry(scenario.schedule.gpus, step, topology, profile);
  }
  return choice;
}

// build_symmetric_plan for `classes` classes whose representatives run ranks first_rank.. ,
// or the mesh's fold quotient.
Plan build_symmetric_plan_at(const Scenario& scenario, int classes, int first_rank,
                             std::optional<MeshFold> fold = std::nullopt);

// Each program's compute stream with no communication slowing it.
std::vector<Picoseconds> programs_compute_ps(const Plan& plan, const CalibrationProfile& profile) {
  const ComputeModel model(plan, profile);
  std::vector<Picoseconds> totals_ps;
  for (const RankProgram& program : plan.programs) {
    totals_ps.push_back(model.compute_stream_ps(program));
  }
  return totals_ps;
}

// A program's compute FLOPs (Plan::compute_flops of each compute op).
double program_flops(const Plan& plan, int rank) {
  const RankProgram& program = plan.programs.at(static_cast<std::size_t>(rank));
  double flops = 0.0;
  for (int i = program.first_index(); i < static_cast<int>(program.size()); ++i) {
    flops += plan.compute_flops(OpId{rank, i});
  }
  return flops;
}

// The work block of a work-block quotient of K classes: the end block holding the rank with
// the most compute, and the spread of the ranks costed (the most less the least).
//   - Contiguous ring: rank r runs r + 1 calls (steps 0..r meet KV chunks r..0 at or below
//     its queries; the others are hidden), affine in r, the most at rank P - 1.
//   - Zigzag, striped, double ring, USP, all-gather KV: rank r's calls are r of one shape and
//     P - 1 - r of the other, so its compute is affine in r, extreme at rank 0 and P - 1. The
//     smallest quotient at each end holds them (two ranks of the ring family, one inner ring of
//     the double ring, two Ulysses groups: O(P) ops each).
//   - Mesh: rank T a + y (KV position T, Q position y) meets Q chunks T a .. T a + a - 1 and KV
//     chunks y + a k, so about a (b - 1 - T) + y of its pairs have the query chunk first:
//     affine in T and in y, not in the rank, and the fused calls' shapes and the diagonal
//     blocks bend it: the end blocks of K ranks themselves are costed (K programs each; costing
//     only the first and last Q-groups chose the lighter block of 32 x 32 at 1024 GPUs, whose
//     quotient was 2.1% short of every rank where the heavier one is exact).
WorkApproximation heaviest_end_block(const Scenario& scenario, int classes,
                                     const CalibrationProfile& profile) {
  const int p = scenario.schedule.gpus;
  const int inner = double_ring_inner(scenario.schedule);
  // All-gather KV's offset quotient may keep one class; a folded one needs two (a ring peer
  // must fold onto another representative); USP's, whole Ulysses groups, at least two.
  const bool offset = scenario.schedule.kind == "allgather_kv";
  int smallest = inner > 0 ? inner : offset && p % 2 != 0 ? 1 : 2;
  if (const int u = usp_shift_degree(scenario); u > 0) {
    int groups = 2;
    while ((p / u) % groups != 0) ++groups;
    smallest = groups * u;
  }
  if (known_mesh_tile(scenario)) smallest = classes;
  const Plan first_plan = build_symmetric_plan_at(scenario, smallest, 0);
  const Plan last_plan = build_symmetric_plan_at(scenario, smallest, p - smallest);
  const std::vector<Picoseconds> first = programs_compute_ps(first_plan, profile);
  const std::vector<Picoseconds> last = programs_compute_ps(last_plan, profile);
  const Picoseconds first_ps = *std::max_element(first.begin(), first.end());
  const Picoseconds last_ps = *std::max_element(last.begin(), last.end());
  const Picoseconds least_ps = std::min(*std::min_element(first.begin(), first.end()),
                                        *std::min_element(last.begin(), last.end()));
  WorkApproximation work{first_ps > last_ps ? 0 : p - classes,
                         std::max(first_ps, last_ps) - least_ps, std::nullopt};
  if (ring_ownership(scenario.schedule)) {
    work.end_rank_flops = {program_flops(first_plan, 0), program_flops(last_plan, smallest - 1)};
  }
  return work;
}

}  // namespace

SymmetryChoice choose_symmetry(const Scenario& scenario, const Topology& topology,
                               const CalibrationProfile& profile) {
  SymmetryChoice choice = choose_shift_symmetry(scenario, topology, profile);
  if (!choice.symmetry || !choice.symmetry->exact() || !work_block_applies(scenario)) {
    return choice;
  }
  const int k = choice.symmetry->classes;
  try {
    choice.symmetry->work = heaviest_end_block(scenario, k, profile);
  } catch (const ScheduleError& e) {
    // A shape the layout cannot split, met as the two end ranks' programs are generated (the
    // whole or lazy plan names the key the same way).
    throw scenario.error_at(e.key(), e.what());
  }
  const int first = choice.symmetry->work->first_rank;
  const std::string work_warning = fmt::format(
      "schedule.symmetry: {} simulated the approximate work-block quotient: under the causal "
      "mask ranks do different work, and ranks {}..{} (the end block with the most) stand for "
      "every block of {}; per-rank figures (exposed communication, overlap, memory{}) are "
      "theirs (schedule.symmetry: off simulates every rank, slower)",
      symmetry_mode(scenario), first, first + k - 1, k,
      choice.symmetry->work->end_rank_flops ? "" : ", compute balance");
  choice.warning = choice.warning.empty() ? work_warning : choice.warning + "; " + work_warning;
  return choice;
}

int all_peers_classes_lower_bound(const Scenario& scenario, const Topology& topology,
                                  const CalibrationProfile& profile) {
  const int step = all_peers_shift_step(scenario);
  if (step <= 0 || !symmetry_applies(scenario)) return 0;
  // All-gather KV's rings run on the role quotient instead where it applies
  // (collective_ring_choice): its plan is then one block's, and the guard after the search
  // judges the quotient found. Where the roles fail, the exact search runs: bound it.
  if (!symmetry_is(scenario, "exact")) {
    if (const std::optional<ShiftSearch> ring =
            collective_ring_search(scenario, topology, profile)) {
      std::string why_not;
      if (roles_of(scenario, *ring, topology, why_not)) return 0;
    }
  }
  const int classes = ring_peer_symmetry(scenario.schedule.gpus, step, topology, profile).classes;
  // None: neither has a quotient, and the whole plan runs under its own guard.
  return classes < scenario.schedule.gpus ? classes : 0;
}

std::optional<RingSymmetry> scenario_symmetry(const Scenario& scenario, const Topology& topology,
                                              const CalibrationProfile& profile) {
  return choose_symmetry(scenario, topology, profile).symmetry;
}

namespace {

// The ring family's forward quotient is generated step by step (ring_classes_source.hpp), and
// so are USP's forward quotient and the double ring's beyond kWholeDoubleRingMaxClasses classes
// (below); the ring family's and USP's backward quotients and the mesh's are built whole.
// With a backward only the lazy run (one class per rank, lazy_plan.hpp) generates as it runs;
// a backward quotient is built whole (but the double ring's, above).
bool windowed_ring_quotient(const Scenario& scenario, int classes) {
  return ring_ownership(scenario.schedule).has_value() &&
         (!scenario.attention.has_backward() || classes == scenario.schedule.gpus);
}

// USP's forward quotient too (usp_classes_source.hpp); its backward only lazily, as the ring's.
bool windowed_usp_quotient(const Scenario& scenario, int classes) {
  return usp_shift_degree(scenario) > 0 &&
         (!scenario.attention.has_backward() || classes == scenario.schedule.gpus);
}

// A double-ring quotient DoubleRingSource can generate: K < P classes of whole inner rings.
bool double_ring_quotient_generated(const Scenario& scenario, int classes) {
  const int inner = double_ring_inner(scenario.schedule);
  return inner > 0 && scenario.schedule.gpus % inner == 0 && classes < scenario.schedule.gpus;
}

// The double ring's lazy run (one class per rank, lazy_plan.hpp) and its quotients of more than
// kWholeDoubleRingMaxClasses classes, forward, backward or both (double_ring_source.hpp).
bool windowed_double_ring(const Scenario& scenario, int classes) {
  if (classes == scenario.schedule.gpus) return double_ring_generated(scenario);
  return double_ring_quotient_generated(scenario, classes) && classes > kWholeDoubleRingMaxClasses;
}

// Pass-Q's quotient and its lazy run (pass_q_source.hpp): it has a forward only.
bool windowed_pass_q(const Scenario& scenario) {
  return scenario.schedule.kind == "pass_q" && !scenario.attention.has_backward();
}

}  // namespace

PlanEstimate symmetric_run_estimate(const Scenario& scenario, int classes) {
  // The ring family's and USP's forward quotients run windowed (ring_classes_source.hpp,
  // usp_classes_source.hpp): a window of ops per class, u times the ring's for USP (a piece is
  // about u ring steps: a step moves u head-split bundles); the double ring's quotients and
  // lazy run and pass-Q's quotient and lazy run a ring's window per rank
  // (double_ring_source.hpp, pass_q_source.hpp); the others are held whole.
  const double window = windowed_usp_quotient(scenario, classes)
                            ? kWindowedOpsPerClass * usp_shift_degree(scenario)
                        : windowed_ring_quotient(scenario, classes) ||
                                windowed_double_ring(scenario, classes) || windowed_pass_q(scenario)
                            ? kWindowedOpsPerClass
                            : 0.0;
  return estimate_symmetric_plan(scenario.attention, scenario.schedule, std::max(1, classes),
                                 window);
}

std::string long_simulation_notice(const Scenario& scenario, int classes, bool at_least) {
  const ScheduleSpec& spec = scenario.schedule;
  const bool every_rank = classes >= spec.gpus;
  const PlanEstimate e = every_rank ? estimate_plan(scenario.attention, spec)
                                    : symmetric_run_estimate(scenario, classes);
  if (e.sim_s <= kLongSimulationS) return {};
  const std::string how =
      every_rank ? std::string("with every rank")
                 : fmt::format("on a quotient of {}{} rank classes{}", at_least ? "at least " : "",
                               classes,
                               at_least ? " (its symmetry search, which routes every rank's "
                                          "peers, comes first)"
                                        : "");
  return fmt::format(
      "{} on {} GPUs runs {}: about {:.3g} ops, estimated at {} of simulation on one core "
      "(sim/scenario/resource_guard.hpp, {:.1f} us an op); --max-ops refuses runs this large",
      spec.kind, spec.gpus, how, e.ops, format_time_s(e.sim_s), kSimSecondsPerOp * 1e6);
}

std::string windowed_plan_violation(const Scenario& scenario, int classes, bool at_least) {
  const PlanEstimate e = symmetric_run_estimate(scenario, classes);
  const ResourceLimits& limits = scenario.limits;
  const double max_memory =
      limits.max_memory_bytes > 0 ? limits.max_memory_bytes : default_max_memory_bytes();
  const auto fits = [&](const PlanEstimate& x) {
    return x.memory_bytes <= max_memory && (limits.max_ops <= 0 || x.ops <= limits.max_ops);
  };
  if (fits(e)) return {};
  // Before the search (no classes yet, or only a lower bound): where the search finds no
  // symmetry the full plan runs, its own guard's to judge (its estimate holds every route the
  // search makes).
  if ((classes < 1 || at_least) && fits(estimate_plan(scenario.attention, scenario.schedule))) {
    return {};
  }
  const std::string how =
      classes == scenario.schedule.gpus ? std::string("generated as it runs")
      : classes > 0
          ? fmt::format("simulated as {}{} rank classes", at_least ? "at least " : "", classes)
          : std::string(
                "simulated symmetrically with any number of rank classes (its "
                "symmetry search looks at every rank's peers, beside the run's per-GPU state)");
  return fmt::format(
      "a plan this machine can hold: {} on {} GPUs {} is about {:.3g} ops, {} of memory "
      "(sim/scenario/symmetric_plan.hpp), beyond the limits ({}{}); raise --max-memory or "
      "--max-ops, or use fewer GPUs",
      scenario.schedule.kind, scenario.schedule.gpus, how, e.ops, format_bytes(e.memory_bytes),
      format_bytes(max_memory),
      limits.max_ops > 0 ? fmt::format(", {:.3g} ops", limits.max_ops) : "");
}

void check_symmetric_plan_resources(const Scenario& scenario, int classes, bool at_least) {
  const std::string violation = windowed_plan_violation(scenario, classes, at_least);
  if (!violation.empty()) throw scenario.error_at("schedule.gpus", violation);
}

namespace {

Plan build_symmetric_plan_at(const Scenario& scenario, int classes, int first_rank,
                             std::optional<MeshFold> fold) {
  const ScheduleSpec& spec = scenario.schedule;
  Plan plan;
  if (const std::optional<MeshTile> tile = known_mesh_tile(scenario)) {
    ScheduleSpec given = spec;
    given.tile_a = tile->a;
    given.tile_b = tile->b;
    given.tile_choice = MeshTileChoice::given;
    plan = fold ? make_mesh_fold_plan(scenario.attention, given, *fold)
                : make_mesh_classes_plan(scenario.attention, given, classes, first_rank);
  } else if (const int inner = double_ring_inner(spec); inner > 0) {
    plan = make_double_ring_classes_plan(scenario.attention, spec.gpus, inner, classes, first_rank);
  } else if (const int u = usp_shift_degree(scenario); u > 0) {
    plan = make_usp_classes_plan(scenario.attention, spec.gpus, u, classes, first_rank);
  } else if (spec.kind == "pass_q") {
    plan = make_pass_q_classes_plan(scenario.attention, spec.gpus, classes);
  } else if (spec.kind == "allgather_kv") {
    plan = make_allgather_kv_classes_plan(scenario.attention, spec.gpus, classes, first_rank);
  } else {
    plan = make_pass_kv_ring_classes_plan(spec.kind, scenario.attention, spec.gpus,
                                          *ring_ownership(spec), classes, first_rank);
  }
  if (spec.correction != Correction::fused) separate_output_corrections(plan);
  if (spec.correction == Correction::eager) plan.merge_form = MergeForm::eager;
  return plan;
}

}  // namespace

Plan build_symmetric_plan(const Scenario& scenario, const RingSymmetry& symmetry) {
  std::optional<MeshFold> fold;
  if (symmetry.mesh_fold) fold = MeshFold{(*symmetry.mesh_fold)[0], (*symmetry.mesh_fold)[1]};
  return build_symmetric_plan_at(scenario, symmetry.classes,
                                 symmetry.work ? symmetry.work->first_rank : 0, fold);
}

std::unique_ptr<RingClassesSource> symmetric_ring_source(const Scenario& scenario,
                                                         const RingSymmetry& symmetry) {
  const ScheduleSpec& spec = scenario.schedule;
  if (!windowed_ring_quotient(scenario, symmetry.classes)) return nullptr;
  return std::make_unique<RingClassesSource>(RingClassesSpec{
      spec.kind, scenario.attention, spec.gpus, *ring_ownership(spec), symmetry.classes,
      spec.correction, symmetry.work ? symmetry.work->first_rank : 0});
}

std::unique_ptr<UspClassesSource> symmetric_usp_source(const Scenario& scenario,
                                                       const RingSymmetry& symmetry) {
  if (!windowed_usp_quotient(scenario, symmetry.classes)) return nullptr;
  const ScheduleSpec& spec = scenario.schedule;
  return std::make_unique<UspClassesSource>(
      UspClassesSpec{scenario.attention, spec.gpus, usp_shift_degree(scenario), symmetry.classes,
                     spec.correction, symmetry.work ? symmetry.work->first_rank : 0});
}

std::unique_ptr<DoubleRingSource> symmetric_double_ring_source(const Scenario& scenario,
                                                               const RingSymmetry& symmetry) {
  const ScheduleSpec& spec = scenario.schedule;
  if (!double_ring_quotient_generated(scenario, symmetry.classes)) return nullptr;
  return std::make_unique<DoubleRingSource>(scenario.attention, spec.gpus, double_ring_inner(spec),
                                            spec.correction, symmetry.classes,
                                            symmetry.work ? symmetry.work->first_rank : 0);
}

bool windowed_double_ring_quotient(const Scenario& scenario, const RingSymmetry& symmetry) {
  return double_ring_quotient_generated(scenario, symmetry.classes) &&
         windowed_double_ring(scenario, symmetry.classes);
}

std::unique_ptr<ProgramSource> symmetric_source(const Scenario& scenario,
                                                const RingSymmetry& symmetry) {
  if (std::unique_ptr<ProgramSource> ring = symmetric_ring_source(scenario, symmetry)) return ring;
  if (windowed_double_ring_quotient(scenario, symmetry)) {
    return symmetric_double_ring_source(scenario, symmetry);
  }
  if (windowed_pass_q(scenario) && symmetry.peers_by_offset) {
    const ScheduleSpec& spec = scenario.schedule;
    return std::make_unique<PassQSource>(scenario.attention, spec.gpus, symmetry.classes,
                                         spec.correction);
  }
  return symmetric_usp_source(scenario, symmetry);
}

std::size_t full_ring_ops(const Plan& quotient, const RingSymmetry& symmetry) {
  return quotient.op_count() * static_cast<std::size_t>(symmetry.full_ranks / quotient.ranks);
}

void describe_full_ring(nlohmann::ordered_json& json, const Plan& quotient,
                        const RingSymmetry& symmetry) {
  json["gpus"] = symmetry.full_ranks;
  json["ops"] = full_ring_ops(quotient, symmetry);
  json["symmetry"] = {{"classes", symmetry.classes}, {"exact", !symmetry.approximate()}};
  if (const auto& roles = symmetry.roles) {
    json["symmetry"]["roles"] = {{"first_rank", roles->first_rank},
                                 {"slowest_step_transfer_s", ps_to_s(roles->slowest_step_ps)},
                                 {"role_spread_s", ps_to_s(roles->role_spread_ps)}};
  }
  if (const auto& fold = symmetry.mesh_fold) {
    json["symmetry"]["mesh_fold"] = {{"kv_positions", (*fold)[0]}, {"q_positions", (*fold)[1]}};
  }
  if (const auto& work = symmetry.work) {
    json["symmetry"]["work_block"] = {{"first_rank", work->first_rank},
                                      {"work_spread_s", ps_to_s(work->work_spread_ps)}};
  }
}

}  // namespace tilesim
