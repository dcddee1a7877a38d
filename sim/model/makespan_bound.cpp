#include "sim/model/makespan_bound.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"
#include "sim/model/compute_model.hpp"
#include "sim/model/flow_transfer_model.hpp"

namespace tilesim {
namespace {

// What the simulator's rounding of one delay (up to a picosecond, plus the flow network's
// completion within a picosecond) may take off a term, and then some.
constexpr double kRoundingPs = 2.0;

double lowered(double ps) { return std::max(0.0, ps - kRoundingPs); }

int object_of(const RankProgram& program, int index, OpKind kind) {
  return kind == OpKind::send ? program.reads(index)[0] : program.writes(index)[0];
}

// The comm ops of the group that starts at comm op `first`: up to the next comm op of another
// group (other ops may sit between them).
int comm_ops_in_group(const RankProgram& program, int first) {
  const int group = program.op(first).comm_group;
  int count = 0;
  for (int j = first; j < static_cast<int>(program.size()); ++j) {
    const Op& op = program.op(j);
    if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
    if (op.comm_group != group) break;
    ++count;
  }
  return count;
}

// Adds to compute_ps the computes and merges of ops [first, end), each lowered, in op order (so
// that a program summed in pieces gives the same double as summed whole).
void add_lowered_computes_ps(const ComputeModel& compute, const RankProgram& program, int first,
                             int end, double& compute_ps) {
  for (int i = first; i < end; ++i) {
    const OpKind kind = program.op(i).kind;
    if (kind == OpKind::compute || kind == OpKind::merge) {
      compute_ps += lowered(static_cast<double>(compute.duration_ps(program, i)));
    }
  }
}

// C_r: the program's computes and merges, each lowered.
double compute_stream_lowered_ps(const ComputeModel& compute, const RankProgram& program) {
  double compute_ps = 0.0;
  add_lowered_computes_ps(compute, program, 0, static_cast<int>(program.size()), compute_ps);
  return compute_ps;
}

}  // namespace

MakespanBound::MakespanBound(const Topology& topology, const CalibrationProfile& profile)
    : topology_(topology),
      profile_(profile),
      router_(topology),
      in_capacity_bytes_per_s_(static_cast<std::size_t>(topology.gpu_count()), 0.0),
      out_capacity_bytes_per_s_(static_cast<std::size_t>(topology.gpu_count()), 0.0),
      node_in_capacity_bytes_per_s_(static_cast<std::size_t>(std::max(topology.node_count, 0)),
                                    0.0) {
  max_lanes_ = std::max(1, topology.gpus_per_node);

  for (LinkId l = 0; l < topology.link_count(); ++l) {
    const Link& link = topology.link(l);
    const LinkCost& cost = profile.link(link.cls);
    if (!cost.defined) {
      throw InputError(profile.source, 0, fmt::format("links.{}", to_string(link.cls)),
                       fmt::format("costs for link class {} (efficiency, alpha, flow_cap): "
                                   "topology '{}' has such links",
                                   to_string(link.cls), topology.name));
    }
    const double capacity = link.bandwidth_bytes_per_s * cost.efficiency;
    const Device& from = topology.device(topology.link_source(l));
    const Device& to = topology.device(topology.link_target(l));
    if (from.kind == DeviceKind::gpu && from.gpu_index >= 0) {
      out_capacity_bytes_per_s_[static_cast<std::size_t>(from.gpu_index)] += capacity;
    }
    if (to.kind == DeviceKind::gpu && to.gpu_index >= 0) {
      in_capacity_bytes_per_s_[static_cast<std::size_t>(to.gpu_index)] += capacity;
    }
    if (to.node >= 0 && to.node < topology.node_count && from.node != to.node) {
      node_in_capacity_bytes_per_s_[static_cast<std::size_t>(to.node)] += capacity;
    }
  }
}

const MakespanBound::PairCost& MakespanBound::pair_cost(int src_gpu, int dst_gpu) {
  const long long key = static_cast<long long>(src_gpu) * topology_.gpu_count() + dst_gpu;
  const auto found = pairs_.find(key);
  if (found != pairs_.end()) return found->second;
  const Route& route = router_.route(src_gpu, dst_gpu);
  const LinkClass slowest = alpha_class(topology_, route);
  double rate = 0.0;
  double link_rate = 0.0;
  for (LinkId l : route.links) {
    const Link& link = topology_.link(l);
    const LinkCost& cost = profile_.link(link.cls);
    const double capacity = link.bandwidth_bytes_per_s * cost.efficiency;
    const double r =
        cost.flow_cap_bytes_per_s > 0 ? std::min(capacity, cost.flow_cap_bytes_per_s) : capacity;
    rate = rate == 0.0 ? r : std::min(rate, r);
    link_rate = link_rate == 0.0 ? capacity : std::min(link_rate, capacity);
  }
  const double fixed_ps = static_cast<double>(s_to_ps(profile_.link(slowest).alpha_s)) +
                          static_cast<double>(route.latency_ps);
  return pairs_.emplace(key, PairCost{fixed_ps, rate, link_rate}).first->second;
}

double MakespanBound::transfer_alone_ps(int src_gpu, int dst_gpu, double bytes) {
  const PairCost& cost = pair_cost(src_gpu, dst_gpu);
  double t_ps = cost.fixed_ps;
  if (bytes > 0 && cost.rate_bytes_per_s > 0) t_ps += bytes / cost.rate_bytes_per_s * 1e12;
  return lowered(t_ps);
}

double MakespanBound::route_share_ps(int src_gpu, int dst_gpu, double total_bytes) {
  const PairCost& cost = pair_cost(src_gpu, dst_gpu);
  double t_ps = cost.fixed_ps;
  if (total_bytes > 0 && cost.link_bytes_per_s > 0) {
    t_ps += total_bytes / cost.link_bytes_per_s * 1e12;
  }
  return lowered(t_ps);
}

double MakespanBound::gpu_in_ps(int gpu, double bytes) const {
  const double c_in = in_capacity_bytes_per_s_[static_cast<std::size_t>(gpu)];
  return c_in > 0 ? lowered(bytes / c_in * 1e12) : 0.0;
}

double MakespanBound::gpu_out_ps(int gpu, double bytes) const {
  const double c_out = out_capacity_bytes_per_s_[static_cast<std::size_t>(gpu)];
  return c_out > 0 ? lowered(bytes / c_out * 1e12) : 0.0;
}

double MakespanBound::node_in_ps(int node, double bytes) const {
  if (node < 0 || node >= static_cast<int>(node_in_capacity_bytes_per_s_.size())) return 0.0;
  const double c_in = node_in_capacity_bytes_per_s_[static_cast<std::size_t>(node)];
  return c_in > 0 ? lowered(bytes / c_in * 1e12) : 0.0;
}

double MakespanBound::lower_bound_s(const Plan& plan, const RingSymmetry* symmetry) {
  const std::vector<int>& gpus = symmetry != nullptr ? symmetry->full_placement : plan.placement;
  auto gpu = [&](int rank) { return gpus.empty() ? rank : gpus[static_cast<std::size_t>(rank)]; };
  // The GPU of rank r's peer in the full ring (the quotient names it mod K).
  const int k = plan.ranks;
  auto peer_gpu = [&](int r, const Op& op) {
    if (symmetry == nullptr) return gpu(op.peer);
    const int p = symmetry->full_ranks;
    const int full = op.kind == OpKind::send ? (r + ((op.peer - r) % k + k) % k) % p
                                             : ((r - ((r - op.peer) % k + k) % k) % p + p) % p;
    return gpu(full);
  };
  const ComputeModel compute(plan, profile_);
  double bound_ps = 0.0;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    const int own = gpu(r);
    const double c_in = in_capacity_bytes_per_s_[static_cast<std::size_t>(own)];
    const double c_out = out_capacity_bytes_per_s_[static_cast<std::size_t>(own)];
    const double compute_ps = compute_stream_lowered_ps(compute, program);
    double comm_ps = 0.0;
    // The comm group being read: a maximal run of comm ops with one Op::comm_group.
    int group = -1;
    bool in_group = false;
    int group_ops = 0;
    double alone_ps = 0.0;
    double in_bytes = 0.0;
    double out_bytes = 0.0;
    auto close_group = [&] {
      if (!in_group) return;
      double t_ps = 0.0;
      if (group_ops <= kRoutedGroupOps) t_ps = alone_ps;
      if (c_in > 0) t_ps = std::max(t_ps, lowered(in_bytes / c_in * 1e12));
      if (c_out > 0) t_ps = std::max(t_ps, lowered(out_bytes / c_out * 1e12));
      comm_ps += t_ps;
      in_group = false;
    };
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
      if (!in_group || op.comm_group != group) {
        close_group();
        in_group = true;
        group = op.comm_group;
        group_ops = comm_ops_in_group(program, i);
        alone_ps = in_bytes = out_bytes = 0.0;
      }
      const double bytes = plan.object(object_of(program, i, op.kind)).bytes;
      const int peer = peer_gpu(r, op);
      const bool sends = op.kind == OpKind::send;
      if (peer != own) (sends ? out_bytes : in_bytes) += bytes;
      if (group_ops <= kRoutedGroupOps) {
        // A ring collective's step runs split over up to a node's GPUs as lanes, each its own
        // flow on its own path (flow_transfer_model.hpp): one lane's share alone bounds it.
        const double lane_bytes =
            plan.comm_style == CommStyle::nccl_ring ? bytes / max_lanes_ : bytes;
        const double t_ps = sends ? transfer_alone_ps(own, peer, lane_bytes)
                                  : transfer_alone_ps(peer, own, lane_bytes);
        alone_ps = std::max(alone_ps, t_ps);
      }
    }
    close_group();
    bound_ps = std::max({bound_ps, compute_ps, comm_ps});
  }
  return bound_ps * 1e-12;
}

double MakespanBound::compute_lower_bound_s(const Plan& plan) const {
  const ComputeModel compute(plan, profile_);
  double bound_ps = 0.0;
  for (const RankProgram& program : plan.programs) {
    bound_ps = std::max(bound_ps, compute_stream_lowered_ps(compute, program));
  }
  return bound_ps * 1e-12;
}

double MakespanBound::compute_lower_bound_s(ProgramSource& source) const {
  Plan& plan = source.plan();
  const ComputeModel compute(plan, profile_);
  double bound_ps = 0.0;
  for (int r = 0; r < plan.ranks; ++r) {
    RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    double compute_ps = 0.0;
    int next = program.first_index();
    while (source.extend(r)) {
      const int end = static_cast<int>(program.size());  // size() counts from op 0
      add_lowered_computes_ps(compute, program, next, end, compute_ps);
      next = end;
      program.discard_before(next);
      source.discard_before(r, next);
    }
    bound_ps = std::max(bound_ps, compute_ps);
  }
  return bound_ps * 1e-12;
}

}  // namespace tilesim
