// How big a plan will be, from the shape alone, so that a request too large for this machine
// fails in milliseconds with its estimate instead of growing until the machine runs out.
//
// Ops (P ranks, non-causal, the default separate output correction: the causal mask only
// removes computes and a fused correction removes merges, so these are upper bounds):
//   ring, zigzag, striped, double_ring   forward 6 P^2 - 5 P, backward 9 P^2 - 5 P, both
//                                        15 P^2 - 10 P (per rank and step: one call, one
//                                        correction, one free of its partials, comm, KV free)
//   allgather_kv                         3 P^2 - 2 P, 8 P^2 - 7 P, 11 P^2 - 9 P (NCCL rings;
//                                        7 P^2 - 5 P, 10 P^2 - 7 P under a window or documents)
//   pass_q                               13 P^2 - 12 P (forward only)
//   double_ring (n inner rings)          the ring's, + 3 n P backward and both when n >= 2
//   usp (u ranks of all-to-all, r = P/u) P ((3u + 3) r + 6u - 11), backward P ((6u + 3) r +
//                                        9u - 14), both P ((9u + 6) r + 12u - 22)
//   ulysses (u = P)                      9 P^2 - 8 P, 12 P^2 - 11 P, 18 P^2 - 16 P, + 3 P
//                                        (ceil(P^2 / 65535) - 1) a pass (calls split)
//   mesh a x b                           P (17a + 8b - 26) forward, P (20a + 11b - 30)
//                                        backward, P (36a + 18b - 53) both
// (forward, backward, both). The non-mesh forms are exact for the generated plans (usp for
// r >= 2; r = 1 is Ulysses, which they bound) (tests/test_resource_guard.cpp); mesh's count
// depends on its greedy step order, so its form is the smallest linear upper bound of the 42
// tiles a x b, a and b powers of 2 with 2 <= ab <= 512, within 33% of each (within 11% with a
// backward); the forms before (fitted on seven tiles) fell up to 5% short of elongated ones.
// The objects, flows and routes of each plan: plan_size (resource_guard.cpp).
// Memory = kSimBaseBytes + kSimBytesPerOp x ops + kSimBytesPerObject x objects +
// kSimBytesPerFlow x flows + kSimBytesPerRoute x routes + kSimBytesPerPair x pairs +
// kSimBytesPerMeshRef x mesh references (plan_size: the objects of all P ranks' chunks, the
// transfers in flight at once, the sender-receiver pairs routed, the computes' chunk pairs and
// the mesh ops' reads and writes); time = 5.6 us per op. The per-op cost is the
// RSS slope of `simulate` ring 1M tokens at 64..1024 GPUs (16K..4.2M ops, O(P) of everything
// else); the others matter where they grow faster than the ops held: the O(P^2) objects,
// flows and routes of pass-Q, all-gather KV and Ulysses, Ulysses' P^3 chunk pairs, and a
// symmetric run (estimate_symmetric_plan), which holds K of the P programs but every object
// and routes every pair in its search. Measured with /usr/bin/time -v on a 2-core host
// (docs/reliability.md, Plan-size guard). A mesh with an automatic tile is estimated with the
// tile whose estimate needs the least memory, so the guard never refuses what some tile could
// fit; where its tiles would run as quotients, prepare_scenario checks one class of a tile
// instead of a whole plan (searched_mesh_tiles_symmetric, symmetric_plan.hpp).
#pragma once

#include <string>

#include "sim/plan/attention_shape.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

inline constexpr double kSimBytesPerOp = 113.0;
// The process before any plan: the binary with its CUDA, NCCL and MPI libraries mapped
// (42 MB for `tilesim --help`, 44 MB for a 64-GPU run).
inline constexpr double kSimBaseBytes = 50e6;
// A data object: DataObject (64 B, in a vector that may hold twice its size) and the
// derivation's hazard slot (32 B).
inline constexpr double kSimBytesPerObject = 128.0;
// A transfer in flight (the flow network's flow) and a route derived and cached (the router's
// entry and the transfer model's route facts): all-gather KV without symmetry, where both are
// P (P - 1), needs 960-1010 bytes per pair beyond its ops at 256 and 512 GPUs.
inline constexpr double kSimBytesPerFlow = 800.0;
inline constexpr double kSimBytesPerRoute = 300.0;
// A (query chunk, key chunk) block pair of a compute op (ChunkPair, 8 B, in its rank's pool,
// with the slack of the pool's growth): P^3 of them in Ulysses, whose every rank computes all P
// x P chunk pairs of its head group (Ulysses on 256 GPUs: 134 MB of its 382 MB).
inline constexpr double kSimBytesPerPair = 12.0;
// A reference (read, write or after) of a mesh op: the int in its rank's pool with the pool's
// growth slack, and the tracker's state for it. The ring family's ops hold 2-4 each, which
// kSimBytesPerOp (their RSS slope) includes; the mesh's fused calls and their corrections hold
// 7-9 per block pair (a 32 x 512 tile: 148,066 a rank, 40 an op), which it does not. Least
// squares, the other constants fixed, over the max RSS of 14 mesh forward runs at 1M tokens
// (1024, 4096 and 16384 GPUs, tiles 8x128 to 256x16, both placements, 128 to 2048 classes;
// docs/reliability.md, Plan-size guard): 5.5 bytes; taken as 6.
inline constexpr double kSimBytesPerMeshRef = 6.0;
// A rank pair the symmetry search routes (its router's cache, route pointers and peer lists):
// 101-109 bytes measured at 256 and 512 GPUs (all-gather KV stopped by --max-ops 1 right after
// the search, at d51a7c0: the guard now checks before it).
inline constexpr double kSearchBytesPerPair = 128.0;
// A rank pair of pass-Q's and all-gather KV's search, which routes by destination and keeps no
// route (rank_shift_symmetry.cpp shift_map_by_destination): the pair's entry in the peer lists
// (4 B) and in the senders' index (4 B). Its routes, one destination's at a time, are O(P).
inline constexpr double kSearchBytesPerStreamedPair = 8.0;
inline constexpr double kSimSecondsPerOp = 5.6e-6;
// A GPU of a job (`job:`): the topology sized to it (devices, links, the router's cache) and
// the job's placement and peer lists for the symmetry search of whole groups. The max RSS of
// `simulate scenarios/job-16k-ring.yaml --set job.gpus=G --set attention.seq_len=64K`, whose
// one-group quotient adds almost nothing, grows 4.34 kB a GPU from 4096 to 16384 GPUs and
// 4.51 kB from 16384 to 65536 (57.5, 110.8 and 332.7 MB).
inline constexpr double kJobBytesPerGpu = 4.6e3;
// The ring family's and USP's forward quotients run windowed (symmetric_plan.hpp): a window of
// ops per class (the tracker's lookahead, a step and the compaction's slack; u times that for
// USP) plus per-GPU state, measured at 1024-4096 GPUs (docs/reliability.md).
inline constexpr double kWindowedOpsPerClass = 256.0;
inline constexpr double kWindowedBytesPerGpu = 40e3;
// A quotient held whole: the symmetry search's state per GPU (the collective lanes, the routes
// the router keeps, the role quotient's step times, link owners and node places). The max RSS
// of all-gather KV on the role quotient exceeded the estimate without it by 1.6 kB a GPU at
// 4096 GPUs (forward) and 2.3 kB at 16384 (both passes) (docs/reliability.md); taken as 3 kB.
inline constexpr double kQuotientBytesPerGpu = 3e3;

struct ResourceLimits {
  double max_memory_bytes = 0.0;  // 0: default_max_memory_bytes()
  double max_ops = 0.0;           // 0: no limit on ops
};

struct PlanEstimate {
  double ops = 0.0;
  double memory_bytes = 0.0;
  double sim_s = 0.0;
};

// What a plan holds, in closed form from the shape (the full mask; the others leave out work,
// so these bound them), when the programs of `programs` of its P ranks are built (P: the full
// plan; K: a symmetric run's quotient, whose objects stay those of all P ranks). With the
// default separate output correction (fused and eager make no more).
struct PlanSize {
  double ops = 0.0;        // ops of the programs built
  double objects = 0.0;    // data objects: every chunk's, partials, correction partials
  double flows = 0.0;      // sends one comm group of a rank posts, largest group, summed
  double routes = 0.0;     // distinct (rank, peer) pairs the programs send on
  double pairs = 0.0;      // block pairs of the compute ops (every chunk pair once per pass)
  double mesh_refs = 0.0;  // the mesh's op references (0 elsewhere: kSimBytesPerMeshRef)
};
// Exact for the generated plans of ring, zigzag, striped, double_ring (objects and ops),
// allgather_kv, pass_q, ulysses and usp; an upper bound for the mesh
// (tests/test_resource_guard.cpp). programs 0: all of them.
PlanSize plan_size(const AttentionShape& shape, const ScheduleSpec& spec, int programs = 0);

PlanEstimate estimate_plan(const AttentionShape& shape, const ScheduleSpec& spec);

// A symmetric run of `classes` rank classes (sim/scenario/symmetric_plan.hpp): the quotient's
// ops (against --max-ops) and the memory of its programs, all P ranks' objects and the
// symmetry search's routes of every rank pair. window_ops_per_class > 0: the quotient runs
// windowed and holds that many ops per class plus kWindowedBytesPerGpu per GPU; 0: it is held
// whole, plus kQuotientBytesPerGpu per GPU. classes = 1 bounds every symmetric run of the
// shape from below.
PlanEstimate estimate_symmetric_plan(const AttentionShape& shape, const ScheduleSpec& spec,
                                     int classes, double window_ops_per_class);

// Half of this machine's memory (MemTotal of /proc/meminfo; 8 GB where it cannot be read).
double default_max_memory_bytes();

// "" when the estimate fits the limits, else the estimate, the limit it passes and the largest
// GPU count that would fit.
std::string resource_violation(const AttentionShape& shape, const ScheduleSpec& spec,
                               const ResourceLimits& limits);

}  // namespace tilesim
