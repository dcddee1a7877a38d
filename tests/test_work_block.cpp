// The work-block quotient (rank_shift_symmetry.hpp WorkApproximation; symmetric_plan.hpp): under
// a causal mask zigzag, striped and double-ring ranks move the same bytes but run calls of two
// shapes in different orders, so no shift is exact; one block's programs stand for every
// block's.
//   - The quotient's programs are those of ranks w..w+K-1 of the full plan, relabelled: the
//     same ops over the same chunk pairs and objects, peers moved by -w and folded mod K (the
//     ring family moves the chunks' owners, the double ring the chunks' tokens).
//   - Against the full simulation at 64 GPUs (forward and both): the makespan lies within the
//     work spread the result reports (|compute of rank 0 - compute of rank P-1|, each alone),
//     the scale of what the quotient drops. Set after seeing the runs: the spread was printed
//     beside the errors before this test was written (zigzag 4M tokens at 64 GPUs: error
//     9.3 ms against a spread of 86 ms; every case 4-10x inside it). Why it and not a fixed
//     percentage: a heuristic bound, not a proof, but one that scales with the work the
//     quotient drops and that every result reports (docs/design-notes.md, "Work-block
//     quotient", has the errors).
//   - Where it applies: roles at any size; auto beyond kAutoExactWorkRanks GPUs only (up to it
//     the full simulation runs, so the equality tests' exact runs are unchanged); never the
//     contiguous ring, whose causal work grows with the rank.
#include <catch2/catch.hpp>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/double_ring_schedule.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/verbs/scenario_source.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

const std::string kScenario = shipped_scenario("ring-256k.yaml");

std::vector<std::string> causal_overrides(const std::string& kind, int gpus,
                                          const std::string& pass, const std::string& symmetry) {
  return {"attention.seq_len=1M",   "attention.causal=true",
          "schedule.kind=" + kind,  "schedule.gpus=" + std::to_string(gpus),
          "attention.pass=" + pass, "schedule.symmetry=" + symmetry};
}

SimulationRun causal_run(const std::string& kind, int gpus, const std::string& pass,
                         const std::string& symmetry) {
  ScenarioSource source;
  source.path = kScenario;
  source.overrides = causal_overrides(kind, gpus, pass, symmetry);
  return run_simulation(source);
}

AttentionShape causal_shape(const std::string& pass) {
  AttentionShape shape;
  shape.seq_len = 16 * 1024;
  shape.heads = 8;
  shape.kv_heads = 8;
  shape.head_dim = 128;
  shape.set_causal(true);
  shape.pass = pass == "both" ? PassSelection::both : PassSelection::forward;
  return shape;
}

}  // namespace

namespace {

// Quotient rank r's program is the full plan's rank w + r's: op by op the same kind and pass,
// peers moved by -w and folded mod K, and pairs, reads and writes naming the same chunks'
// tensors, where the quotient's chunk c is the full plan's chunk c + chunk_shift (the ring
// family keeps chunk ids and moves owners: 0; the double ring moves the chunks' tokens: w).
void check_block_programs(const Plan& quotient, const Plan& full, int w, int chunk_shift) {
  const int p = full.ranks, k = quotient.ranks;
  const auto moved = [&](int chunk) { return (chunk + chunk_shift) % p; };
  const auto same_objects = [&](std::span<const int> mine, std::span<const int> theirs) {
    if (mine.size() != theirs.size()) return false;
    for (std::size_t j = 0; j < mine.size(); ++j) {
      const DataObject& a = quotient.objects[static_cast<std::size_t>(mine[j])];
      const DataObject& b = full.objects[static_cast<std::size_t>(theirs[j])];
      if (a.tensor != b.tensor || moved(a.chunk) != b.chunk || a.bytes != b.bytes) return false;
    }
    return true;
  };
  for (int r = 0; r < k; ++r) {
    const RankProgram& mine = quotient.programs[static_cast<std::size_t>(r)];
    const RankProgram& theirs = full.programs[static_cast<std::size_t>(w + r)];
    REQUIRE(mine.size() == theirs.size());
    for (int i = 0; i < static_cast<int>(mine.size()); ++i) {
      const Op& a = mine.op(i);
      const Op& b = theirs.op(i);
      CHECK(a.kind == b.kind);
      CHECK(a.pass == b.pass);
      if (a.kind == OpKind::send || a.kind == OpKind::recv) {
        CHECK(a.peer == (b.peer - w + p) % p % k);
      }
      const auto pa = mine.pairs(i), pb = theirs.pairs(i);
      REQUIRE(pa.size() == pb.size());
      for (std::size_t j = 0; j < pa.size(); ++j) {
        CHECK(moved(pa[j].q_chunk) == pb[j].q_chunk);
        CHECK(moved(pa[j].kv_chunk) == pb[j].kv_chunk);
      }
      CHECK(same_objects(mine.reads(i), theirs.reads(i)));
      CHECK(same_objects(mine.writes(i), theirs.writes(i)));
    }
  }
}

}  // namespace

TEST_CASE("a work-block quotient runs the programs of its block, relabelled") {
  const int p = 16, k = 8, w = 8;
  for (const auto& [kind, ownership] :
       {std::pair{std::string("zigzag"), ChunkOwnership::zigzag},
        std::pair{std::string("striped"), ChunkOwnership::striped}}) {
    for (const std::string pass : {"forward", "both"}) {
      INFO(kind << ", pass " << pass);
      const AttentionShape shape = causal_shape(pass);
      const Plan full = make_pass_kv_ring_plan(kind, shape, p, ownership);
      const Plan quotient = make_pass_kv_ring_classes_plan(kind, shape, p, ownership, k, w);
      REQUIRE(quotient.ranks == k);
      // Chunk c is owned by rank c in the full plan; in the quotient by (c - w) mod P.
      for (std::size_t c = 0; c < full.chunks.size(); ++c) {
        CHECK(quotient.chunks[c].owner == (full.chunks[c].owner - w + p) % p);
      }
      check_block_programs(quotient, full, w, 0);
    }
  }
}

TEST_CASE("a double ring's work-block quotient runs its block's programs, chunks rotated") {
  const int p = 16, inner = 4, k = 8, w = 8;
  for (const std::string pass : {"forward", "both"}) {
    INFO("pass " << pass);
    const AttentionShape shape = causal_shape(pass);
    const Plan full = make_double_ring_plan(shape, p, inner);
    const Plan quotient = make_double_ring_classes_plan(shape, p, inner, k, w);
    REQUIRE(quotient.ranks == k);
    // Chunk c of the quotient holds the tokens of the full plan's chunk c + w, owned by rank c.
    for (int c = 0; c < p; ++c) {
      const auto i = static_cast<std::size_t>(c);
      CHECK(quotient.chunks[i].blocks == full.chunks[static_cast<std::size_t>((c + w) % p)].blocks);
      CHECK(quotient.chunks[i].owner == full.chunks[i].owner);
    }
    check_block_programs(quotient, full, w, w);
  }
}

TEST_CASE("the work-block quotient lies within its work spread of the full simulation") {
  for (const std::string kind : {"zigzag", "striped", "double_ring"}) {
    for (const std::string pass : {"forward", "both"}) {
      INFO(kind << " on 64 GPUs, 1M tokens, causal, pass " << pass);
      const SimulationRun full = causal_run(kind, 64, pass, "off");
      const SimulationRun block = causal_run(kind, 64, pass, "roles");
      REQUIRE_FALSE(full.symmetric());
      REQUIRE(block.symmetric());
      REQUIRE(block.symmetry->work.has_value());
      CHECK(block.symmetry->approximate());
      // The exact shift of the topology: one node, two for the double ring (whose shifts are
      // whole inner rings of 8 and whose outer peer r + 8 must not fold onto r).
      const int classes = kind == "double_ring" ? 16 : 8;
      CHECK(block.symmetry->classes == classes);
      const WorkApproximation& work = *block.symmetry->work;
      CHECK((work.first_rank == 0 || work.first_rank == 64 - classes));
      CHECK(work.work_spread_ps > 0);
      const double full_s = ps_to_s(full.result.makespan_ps);
      const double block_s = ps_to_s(block.result.makespan_ps);
      INFO("full " << full_s << " s, work block " << block_s << " s, spread "
                   << ps_to_s(work.work_spread_ps) << " s");
      CHECK(std::abs(block_s - full_s) <= ps_to_s(work.work_spread_ps));
      // The bytes do not depend on the mask: every rank moves the same, exactly.
      CHECK(summarize(block.result).comm_bytes_total == summarize(full.result).comm_bytes_total);
      const nlohmann::ordered_json doc = simulation_document(block, false);
      CHECK(doc["symmetry"]["exact"] == false);
      CHECK(doc["symmetry"]["work_block"]["first_rank"] == work.first_rank);
    }
  }
}

TEST_CASE("auto takes the work-block quotient only beyond kAutoExactWorkRanks GPUs") {
  const auto prepared = [](const std::string& kind, int gpus, const std::string& symmetry) {
    return prepare_scenario(kScenario, causal_overrides(kind, gpus, "forward", symmetry));
  };
  const PreparedScenario small = prepared("zigzag", kAutoExactWorkRanks, "auto");
  CHECK_FALSE((small.symmetry && small.symmetry->exact()));
  const PreparedScenario large = prepared("zigzag", 2 * kAutoExactWorkRanks, "auto");
  REQUIRE(large.symmetry.has_value());
  REQUIRE(large.symmetry->work.has_value());
  CHECK(large.symmetry_warning.find("work-block quotient") != std::string::npos);
  // exact: the full simulation, however large.
  const PreparedScenario exact = prepared("striped", 2 * kAutoExactWorkRanks, "exact");
  CHECK_FALSE((exact.symmetry && exact.symmetry->exact()));
  // The contiguous ring: never, and roles says why.
  const PreparedScenario ring = prepared("ring", 64, "roles");
  CHECK_FALSE((ring.symmetry && ring.symmetry->exact()));
  CHECK(ring.symmetry_warning.find("roles not applied") != std::string::npos);
}
