#include "sim/plan/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tilesim {

std::string_view to_string(Tensor tensor) {
  switch (tensor) {
    case Tensor::q:
      return "Q";
    case Tensor::kv:
      return "KV";
    case Tensor::o:
      return "O";
    case Tensor::lse:
      return "LSE";
    case Tensor::d_o:
      return "dO";
    case Tensor::delta:
      return "D";
    case Tensor::dq:
      return "dQ";
    case Tensor::dkv:
      return "dKV";
  }
  return "?";
}

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::compute:
      return "compute";
    case OpKind::send:
      return "send";
    case OpKind::recv:
      return "recv";
    case OpKind::merge:
      return "merge";
    case OpKind::free:
      return "free";
  }
  return "?";
}

std::string_view to_string(Pass pass) { return pass == Pass::fwd ? "fwd" : "bwd"; }

namespace {
std::uint16_t narrow_count(std::size_t n) {
  if (n > 0xffff) throw std::length_error("too many references on one op");
  return static_cast<std::uint16_t>(n);
}
}  // namespace

int RankProgram::add(Op op, std::span<const int> reads, std::span<const int> writes,
                     std::span<const int> after) {
  // An op added without pairs has none, whatever the copied Op says (remove() re-adds an op
  // whose kind was edited; a stale pair_count would point past the pair pool: found by
  // fuzz_plan, fuzz/regressions/plan/).
  if (op.kind != OpKind::compute || pairs_.empty() ||
      op.pairs_begin + op.pair_count > pairs_.size()) {
    op.pair_count = 0;
    op.pairs_begin = 0;
  }
  op.refs_begin = static_cast<std::uint32_t>(refs_.size());
  op.read_count = narrow_count(reads.size());
  op.write_count = narrow_count(writes.size());
  op.after_count = narrow_count(after.size());
  refs_.insert(refs_.end(), reads.begin(), reads.end());
  refs_.insert(refs_.end(), writes.begin(), writes.end());
  refs_.insert(refs_.end(), after.begin(), after.end());
  ops_.push_back(op);
  return static_cast<int>(size()) - 1;
}

void RankProgram::discard_before(int index) {
  if (index <= first_index()) return;  // already gone (local() would wrap below first_)
  const std::size_t drop = std::min(local(index), ops_.size());
  if (drop == 0) return;
  // The pools are filled in op order, so the first kept op's ranges start them.
  const std::uint32_t refs_cut =
      drop < ops_.size() ? ops_[drop].refs_begin : static_cast<std::uint32_t>(refs_.size());
  std::uint32_t pairs_cut = static_cast<std::uint32_t>(pairs_.size());
  for (std::size_t i = drop; i < ops_.size(); ++i) {
    if (ops_[i].pair_count > 0) {
      pairs_cut = ops_[i].pairs_begin;
      break;
    }
  }
  ops_.erase(ops_.begin(), ops_.begin() + static_cast<std::ptrdiff_t>(drop));
  refs_.erase(refs_.begin(), refs_.begin() + refs_cut);
  pairs_.erase(pairs_.begin(), pairs_.begin() + pairs_cut);
  for (Op& o : ops_) {
    o.refs_begin -= refs_cut;
    if (o.pair_count > 0) o.pairs_begin -= pairs_cut;
  }
  first_ += drop;
}

int RankProgram::add_compute(Op op, std::span<const ChunkPair> pairs, std::span<const int> reads,
                             std::span<const int> writes, std::span<const int> after) {
  if (pairs.empty()) throw std::invalid_argument("a compute op needs at least one block pair");
  op.kind = OpKind::compute;
  op.pairs_begin = static_cast<std::uint32_t>(pairs_.size());
  op.pair_count = narrow_count(pairs.size());
  pairs_.insert(pairs_.end(), pairs.begin(), pairs.end());
  return add(op, reads, writes, after);
}

void RankProgram::set_refs(int index, std::span<const int> reads, std::span<const int> writes,
                           std::span<const int> after) {
  Op& o = mutable_op(index);
  o.refs_begin = static_cast<std::uint32_t>(refs_.size());
  o.read_count = narrow_count(reads.size());
  o.write_count = narrow_count(writes.size());
  o.after_count = narrow_count(after.size());
  refs_.insert(refs_.end(), reads.begin(), reads.end());
  refs_.insert(refs_.end(), writes.begin(), writes.end());
  refs_.insert(refs_.end(), after.begin(), after.end());
}

void RankProgram::remove(int index) {
  RankProgram rebuilt;
  for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
    if (i == index) continue;
    std::vector<int> after_shifted;
    for (int a : after(i)) {
      if (a == index) continue;
      after_shifted.push_back(a > index ? a - 1 : a);
    }
    if (op(i).pair_count > 0) {
      rebuilt.add_compute(op(i), pairs(i), reads(i), writes(i), after_shifted);
    } else {
      rebuilt.add(op(i), reads(i), writes(i), after_shifted);
    }
  }
  *this = std::move(rebuilt);
}

std::size_t Plan::op_count() const {
  std::size_t n = 0;
  for (const auto& p : programs) n += p.size();
  return n;
}

int Plan::add_object(DataObject object) {
  objects.push_back(std::move(object));
  return static_cast<int>(objects.size()) - 1;
}

double Plan::unmasked_pairs(int q_chunk, int kv_chunk) const {
  double pairs = 0.0;
  for (int qb : chunks[static_cast<std::size_t>(q_chunk)].blocks) {
    for (int kb : chunks[static_cast<std::size_t>(kv_chunk)].blocks) {
      pairs += layout.unmasked_pairs(qb, kb, shape.mask);
    }
  }
  return pairs;
}

double Plan::compute_flops(OpId id) const {
  const RankProgram& program = programs.at(static_cast<std::size_t>(id.rank));
  const Op& op = program.op(id.index);
  if (op.kind != OpKind::compute) return 0.0;
  return compute_flops(op.pass, program.pairs(id.index));
}

double Plan::compute_flops(Pass pass, std::span<const ChunkPair> pairs) const {
  const double per_pair =
      pass == Pass::fwd ? shape.flops_per_pair_forward() : shape.flops_per_pair_backward();
  double unmasked = 0.0;
  for (ChunkPair bp : pairs) unmasked += unmasked_pairs(bp.q_chunk, bp.kv_chunk);
  return per_pair * unmasked / static_cast<double>(head_groups);
}

std::string Plan::describe(OpId id) const {
  const RankProgram& program = programs.at(static_cast<std::size_t>(id.rank));
  const Op& op = program.op(id.index);
  auto name = [&](int obj) { return objects.at(static_cast<std::size_t>(obj)).name; };
  std::string head = fmt::format("rank {} op {}: {}", id.rank, id.index, to_string(op.kind));
  switch (op.kind) {
    case OpKind::compute: {
      const auto pairs = program.pairs(id.index);
      if (pairs.size() == 1) {
        return fmt::format("{} chunk {} x chunk {} {}", head, pairs[0].q_chunk, pairs[0].kv_chunk,
                           to_string(op.pass));
      }
      // Batched: name the first few pairs so messages stay one line.
      std::string list;
      constexpr std::size_t kShown = 4;
      for (std::size_t k = 0; k < std::min(pairs.size(), kShown); ++k) {
        list += fmt::format("{}{}x{}", k == 0 ? "" : ", ", pairs[k].q_chunk, pairs[k].kv_chunk);
      }
      if (pairs.size() > kShown) list += ", ...";
      return fmt::format("{} {} chunk pairs ({}) {}", head, pairs.size(), list, to_string(op.pass));
    }
    case OpKind::send:
      return fmt::format("{} {} to rank {}", head,
                         program.reads(id.index).empty() ? "?" : name(program.reads(id.index)[0]),
                         op.peer);
    case OpKind::recv:
      return fmt::format("{} {} from rank {}", head,
                         program.writes(id.index).empty() ? "?" : name(program.writes(id.index)[0]),
                         op.peer);
    case OpKind::merge:
    case OpKind::free: {
      std::string objs;
      for (int w : program.writes(id.index)) objs += " " + name(w);
      if (op.kind == OpKind::merge) {
        objs += " <-";
        for (int r : program.reads(id.index)) objs += " " + name(r);
      }
      return head + objs;
    }
  }
  return head;
}

}  // namespace tilesim
