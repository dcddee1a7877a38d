#include "sim/plan/plan_structure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tilesim {
namespace {

class StructureCheck {
 public:
  StructureCheck(const Plan& plan, std::size_t max_errors) : plan_(plan), max_(max_errors) {}

  std::vector<std::string> run() {
    if (plan_.ranks < 0 || plan_.programs.size() != static_cast<std::size_t>(plan_.ranks)) {
      fail(fmt::format("{} programs for {} ranks", plan_.programs.size(), plan_.ranks));
      return errors_;
    }
    if (plan_.head_groups < 1) fail(fmt::format("head_groups {} < 1", plan_.head_groups));
    if (plan_.head_groups > std::max(plan_.shape.heads, 1)) {
      fail(fmt::format("head_groups {} > heads {}", plan_.head_groups, plan_.shape.heads));
    }
    if (plan_.layout.blocks < 1) fail(fmt::format("layout of {} blocks", plan_.layout.blocks));
    if (!plan_.placement.empty() &&
        plan_.placement.size() != static_cast<std::size_t>(plan_.ranks)) {
      fail(fmt::format("placement of {} ranks for {}", plan_.placement.size(), plan_.ranks));
    }
    for (std::size_t c = 0; c < plan_.chunks.size(); ++c) check_chunk(static_cast<int>(c));
    for (std::size_t o = 0; o < plan_.objects.size(); ++o) check_object(static_cast<int>(o));
    for (int r = 0; r < plan_.ranks && errors_.size() < max_; ++r) {
      const RankProgram& program = plan_.programs[static_cast<std::size_t>(r)];
      for (int i = 0; i < static_cast<int>(program.size()) && errors_.size() < max_; ++i) {
        check_op(r, i, program);
      }
    }
    return errors_;
  }

 private:
  void fail(std::string message) {
    if (errors_.size() < max_) errors_.push_back(std::move(message));
  }
  bool rank_ok(int r) const { return r >= 0 && r < plan_.ranks; }
  bool object_ok(int o) const { return o >= 0 && o < static_cast<int>(plan_.objects.size()); }
  bool chunk_ok(int c) const { return c >= 0 && c < static_cast<int>(plan_.chunks.size()); }

  void check_chunk(int c) {
    const Chunk& chunk = plan_.chunks[static_cast<std::size_t>(c)];
    if (!rank_ok(chunk.owner))
      fail(fmt::format("chunk {}: owner {} is not a rank", c, chunk.owner));
    if (chunk.head_group < 0 || chunk.head_group >= plan_.head_groups) {
      fail(fmt::format("chunk {}: head group {} of {}", c, chunk.head_group, plan_.head_groups));
    }
    for (int b : chunk.blocks) {
      if (b < 0 || b >= plan_.layout.blocks) {
        fail(fmt::format("chunk {}: block {} of {}", c, b, plan_.layout.blocks));
      }
    }
  }

  void check_object(int o) {
    const DataObject& x = plan_.objects[static_cast<std::size_t>(o)];
    if (static_cast<int>(x.tensor) > static_cast<int>(Tensor::dkv)) {
      fail(fmt::format("object {}: tensor kind {}", o, static_cast<int>(x.tensor)));
    }
    if (!chunk_ok(x.chunk)) fail(fmt::format("object {}: chunk {} does not exist", o, x.chunk));
    if (!rank_ok(x.home_rank))
      fail(fmt::format("object {}: home {} is not a rank", o, x.home_rank));
    if (!std::isfinite(x.bytes) || x.bytes < 0)
      fail(fmt::format("object {}: {} bytes", o, x.bytes));
  }

  void check_op(int r, int i, const RankProgram& program) {
    const Op& op = program.op(i);
    const auto where = [&] { return fmt::format("rank {} op {}", r, i); };
    if (static_cast<int>(op.kind) > static_cast<int>(OpKind::free)) {
      fail(fmt::format("{}: op kind {}", where(), static_cast<int>(op.kind)));
      return;
    }
    if (static_cast<int>(op.pass) > static_cast<int>(Pass::bwd)) {
      fail(fmt::format("{}: pass {}", where(), static_cast<int>(op.pass)));
    }
    const bool comm = op.kind == OpKind::send || op.kind == OpKind::recv;
    if (comm && (!rank_ok(op.peer) || op.peer == r)) {
      fail(fmt::format("{}: peer {} is not another rank", where(), op.peer));
    }
    if (comm && op.comm_group < 0) fail(fmt::format("{}: comm group {}", where(), op.comm_group));
    if (comm && program.reads(i).size() + program.writes(i).size() != 1) {
      fail(fmt::format("{}: a send reads one object, a recv writes one", where()));
    }
    for (const auto refs : {program.reads(i), program.writes(i)}) {
      for (int o : refs) {
        if (!object_ok(o)) fail(fmt::format("{}: object {} does not exist", where(), o));
      }
    }
    for (int a : program.after(i)) {
      if (a < 0 || a >= i) fail(fmt::format("{}: after {} is not an earlier op", where(), a));
    }
    if (op.kind == OpKind::compute && op.pair_count == 0) {
      fail(fmt::format("{}: compute over no chunk pair", where()));
    }
    for (const ChunkPair& p : program.pairs(i)) {
      if (!chunk_ok(p.q_chunk) || !chunk_ok(p.kv_chunk)) {
        fail(fmt::format("{}: chunk pair ({}, {}) does not exist", where(), p.q_chunk, p.kv_chunk));
      }
    }
  }

  const Plan& plan_;
  std::size_t max_;
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<std::string> plan_structure_errors(const Plan& plan, std::size_t max_errors) {
  return StructureCheck(plan, max_errors).run();
}

}  // namespace tilesim
