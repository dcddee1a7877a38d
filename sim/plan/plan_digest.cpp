#include "sim/plan/plan_digest.hpp"

#include <fmt/format.h>

#include <span>
#include <stdexcept>

#include "sim/core/fnv1a.hpp"

namespace tilesim {
namespace {

void add_ints(Fnv1a& fnv, std::span<const int> values) {
  fnv.add(static_cast<std::uint64_t>(values.size()));
  for (int v : values) fnv.add(static_cast<std::int32_t>(v));
}

void add_shape(Fnv1a& fnv, const AttentionShape& s) {
  fnv.add(s.seq_len);
  fnv.add(static_cast<std::int32_t>(s.batch));
  fnv.add(static_cast<std::int32_t>(s.heads));
  fnv.add(static_cast<std::int32_t>(s.kv_heads));
  fnv.add(static_cast<std::int32_t>(s.head_dim));
  // Only a distinct v head dim is hashed, so plans of dv = d keep their digests.
  if (s.value_dim() != s.head_dim) fnv.add(static_cast<std::int32_t>(s.value_dim()));
  fnv.add(static_cast<std::int32_t>(s.dtype));
  fnv.add(static_cast<std::uint8_t>(s.causal));
  fnv.add(static_cast<std::int32_t>(s.pass));
  // Only the masks beyond full/causal add bytes, so older plans keep their digests.
  if (s.mask.kind == AttentionMaskKind::sliding_window) fnv.add(s.mask.window_tokens);
  if (s.mask.kind == AttentionMaskKind::documents) {
    for (std::int64_t start : s.mask.document_starts) fnv.add(start);
  }
}

}  // namespace

PlanDigestBuilder::PlanDigestBuilder(const Plan& plan) {
  Fnv1a& fnv = fnv_;
  fnv.add(std::string_view(plan.schedule));
  for (int v : {plan.tile_a, plan.tile_b, plan.ranks, plan.head_groups}) {
    fnv.add(static_cast<std::int32_t>(v));
  }
  add_shape(fnv, plan.shape);
  fnv.add(static_cast<std::int32_t>(plan.layout.kind));
  fnv.add(plan.layout.seq_len);
  fnv.add(static_cast<std::int32_t>(plan.layout.blocks));
  // Added only when not the default, so that one-pass plans keep their digests.
  if (plan.merge_form != MergeForm::one_pass) fnv.add(static_cast<std::uint8_t>(plan.merge_form));
  if (plan.comm_style != CommStyle::p2p) fnv.add(static_cast<std::uint8_t>(plan.comm_style));
  // An empty placement means the identity: both spellings are one plan.
  fnv.add(static_cast<std::uint64_t>(plan.ranks));
  for (int r = 0; r < plan.ranks; ++r) {
    fnv.add(static_cast<std::int32_t>(
        plan.placement.empty() ? r : plan.placement[static_cast<std::size_t>(r)]));
  }
  fnv.add(static_cast<std::uint64_t>(plan.chunks.size()));
  for (const Chunk& c : plan.chunks) {
    add_ints(fnv, c.blocks);
    fnv.add(static_cast<std::int32_t>(c.owner));
    fnv.add(c.tokens);
    fnv.add(static_cast<std::int32_t>(c.head_group));
  }
  fnv.add(static_cast<std::uint64_t>(plan.objects.size()));
  for (const DataObject& o : plan.objects) {
    fnv.add(static_cast<std::uint8_t>(o.tensor));
    fnv.add(static_cast<std::int32_t>(o.chunk));
    fnv.add(static_cast<std::int32_t>(o.home_rank));
    fnv.add(o.bytes);
    fnv.add(static_cast<std::uint8_t>(o.input));
    fnv.add(static_cast<std::uint8_t>(o.output));
  }
}

void PlanDigestBuilder::add_program(const ProgramDigest& program) {
  fnv_.add(static_cast<std::uint64_t>(program.ops()));
  fnv_.add(program.value());
}

void ProgramDigest::add_op(const RankProgram& program, int index) {
  ++ops_;
  Fnv1a& fnv = fnv_;
  const Op& op = program.op(index);
  fnv.add(static_cast<std::uint8_t>(op.kind));
  fnv.add(static_cast<std::uint8_t>(op.pass));
  fnv.add(op.peer);
  fnv.add(op.comm_group);
  const auto pairs = program.pairs(index);
  fnv.add(static_cast<std::uint64_t>(pairs.size()));
  for (const ChunkPair& p : pairs) {
    fnv.add(p.q_chunk);
    fnv.add(p.kv_chunk);
  }
  add_ints(fnv, program.reads(index));
  add_ints(fnv, program.writes(index));
  add_ints(fnv, program.after(index));
}

std::string PlanDigestBuilder::value() const { return fmt::format("{:016x}", fnv_.value()); }

std::string plan_digest(const Plan& plan) {
  for (const RankProgram& program : plan.programs) {
    if (program.first_index() > 0) {
      throw std::logic_error("plan_digest: a windowed program no longer holds its first ops");
    }
  }
  PlanDigestBuilder digest(plan);
  for (const RankProgram& program : plan.programs) {
    ProgramDigest ops;
    for (std::size_t i = 0; i < program.size(); ++i) ops.add_op(program, static_cast<int>(i));
    digest.add_program(ops);
  }
  return digest.value();
}

}  // namespace tilesim
