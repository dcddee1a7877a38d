// The plan-level entry: a generated plan (schedule, GPU count, pass, mask, mesh tile and output
// correction from the first bytes) with random corruptions (the rest of the bytes, 4 per edit),
// through the validator. The validator must report any plan, never crash or read out of bounds;
// a generated plan that fails validation before any edit is a generator bug, reported as a crash.
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "sim/plan/validator.hpp"
#include "sim/schedules/schedule.hpp"

namespace {

using namespace tilesim;

struct Bytes {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at = 0;
  std::uint8_t next() { return at < size ? data[at++] : 0; }
  bool more() const { return at < size; }
};

// A wild int: small values, in-range values and the extremes.
int wild(std::uint8_t b, int range) {
  switch (b % 4) {
    case 0:
      return range > 0 ? (b >> 2) % range : 0;
    case 1:
      return -1 - (b >> 2);
    case 2:  // just past the range (not past INT_MAX: a corrupted count can be that)
      return range > std::numeric_limits<int>::max() - 64 ? range : range + (b >> 2);
    default:
      return b & 0x80 ? std::numeric_limits<int>::max() : std::numeric_limits<int>::min();
  }
}

void corrupt(Plan& plan, Bytes& in) {
  const std::uint8_t what = in.next(), a = in.next(), b = in.next(), c = in.next();
  if (plan.programs.empty()) return;
  RankProgram& program = plan.programs[a % plan.programs.size()];
  const int objects = static_cast<int>(plan.objects.size());
  if (what % 10 >= 7) {  // the plan's tables
    if (what % 10 == 7 && !plan.objects.empty()) {
      DataObject& o = plan.objects[b % plan.objects.size()];
      if (c % 4 == 0) o.chunk = wild(c, static_cast<int>(plan.chunks.size()));
      if (c % 4 == 1) o.home_rank = wild(c, plan.ranks);
      if (c % 4 == 2) o.bytes = c & 0x10 ? -1.0 : std::numeric_limits<double>::quiet_NaN();
      if (c % 4 == 3) o.tensor = static_cast<Tensor>(c);
    } else if (what % 10 == 8 && !plan.chunks.empty()) {
      Chunk& ch = plan.chunks[b % plan.chunks.size()];
      if (c % 3 == 0) ch.owner = wild(c, plan.ranks);
      if (c % 3 == 1) ch.head_group = wild(c, plan.head_groups);
      if (c % 3 == 2 && !ch.blocks.empty()) ch.blocks[0] = wild(c, plan.layout.blocks);
    } else if (what % 10 == 9) {
      if (c % 2 == 0) plan.ranks = wild(c, plan.ranks);
      if (c % 2 == 1) plan.head_groups = wild(c, plan.head_groups);
    }
    return;
  }
  if (program.size() == 0) return;
  const int i = b % static_cast<int>(program.size());
  Op& op = program.mutable_op(i);
  switch (what % 10) {
    case 0:
      op.kind = static_cast<OpKind>(c % 6);
      break;
    case 1:
      op.peer = wild(c, plan.ranks);
      break;
    case 2:
      op.comm_group = wild(c, 8);
      break;
    case 3:
      op.pass = static_cast<Pass>(c % 3);
      break;
    case 4:
      program.remove(i);
      break;
    case 5: {
      // Copies first: set_refs appends to the pool the spans point into.
      const auto copy = [](std::span<const int> x) { return std::vector<int>(x.begin(), x.end()); };
      const std::vector<int> reads = copy(program.reads(i)), writes = copy(program.writes(i)),
                             after = copy(program.after(i));
      const std::vector<int> ref = {wild(c, objects)}, earlier = {wild(c, i)};
      if (c & 1) {
        program.set_refs(i, ref, {}, after);
      } else {
        program.set_refs(i, reads, writes, earlier);
      }
      break;
    }
    default: {
      auto pairs = program.mutable_pairs(i);
      if (!pairs.empty()) {
        const int chunks = static_cast<int>(plan.chunks.size());
        (c & 1 ? pairs[0].q_chunk : pairs[0].kv_chunk) = wild(c, chunks);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in{data, size};
  AttentionShape shape;
  shape.seq_len = 96;
  shape.heads = 4;
  shape.kv_heads = 2;
  shape.head_dim = 16;
  const std::uint8_t k = in.next(), g = in.next(), flags = in.next();
  shape.set_causal((flags & 1) != 0);
  shape.pass = static_cast<PassSelection>((flags >> 1) % 3);
  ScheduleSpec spec;
  spec.kind = kScheduleKinds[k % std::size(kScheduleKinds)];
  spec.gpus = 1 + g % 8;
  spec.gpus_per_node = 4;
  if (spec.kind == "mesh") {  // a given tile a x b = gpus (prepare_scenario resolves auto)
    std::vector<int> divisors;
    for (int a = 1; a <= spec.gpus; ++a) {
      if (spec.gpus % a == 0) divisors.push_back(a);
    }
    spec.tile_a = divisors[(flags >> 4) % divisors.size()];
    spec.tile_b = spec.gpus / spec.tile_a;
  }
  if (spec.kind == "usp") spec.ulysses_degree = (flags >> 3) % 2 + 1;
  spec.correction = g & 0x80 ? Correction::fused : Correction::separate;
  Plan plan;
  try {
    plan = make_plan(shape, spec);
  } catch (const ScheduleError&) {
    return 0;  // a shape the schedule cannot split: the scenario layer's InputError
  }
  if (!validate_plan(plan).ok()) std::abort();  // a generator bug
  while (in.more()) corrupt(plan, in);
  validate_plan(plan);  // reports, whatever the edits
  return 0;
}
