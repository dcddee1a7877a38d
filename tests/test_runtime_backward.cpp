// Runtime backward and head groups without MPI: the saved forward state of a backward-only plan
// is the true forward, head-group objects hold their heads' values, and running every
// backward block pair of a plan with the runtime's CPU block loops gives the reference dQ and
// dKV (so the mpirun tests only have to get the plan's data movement right).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_block_ops.hpp"
#include "runtime/executor/input_data.hpp"
#include "runtime/executor/numerics_check.hpp"
#include "runtime/executor/object_layout.hpp"
#include "runtime/executor/reference_outputs.hpp"
#include "sim/schedules/schedule.hpp"

using namespace tilesim;
using namespace tilesim::runtime;

namespace {

Plan make(const std::string& kind, int gpus, bool causal, PassSelection pass, int kv_heads = 2,
          int ulysses = 0) {
  AttentionShape s;
  s.seq_len = 64;
  s.heads = 4;
  s.kv_heads = kv_heads;
  s.head_dim = 8;
  s.dtype = DType::fp32;
  s.set_causal(causal);
  s.pass = pass;
  ScheduleSpec spec;
  spec.kind = kind;
  spec.gpus = gpus;
  spec.ulysses_degree = ulysses;
  return make_plan(s, spec);
}

// The input or final-output object of a tensor of a chunk (not a partial).
int object_of(const Plan& plan, Tensor tensor, int chunk) {
  for (int i = 0; i < static_cast<int>(plan.objects.size()); ++i) {
    const DataObject& d = plan.object(i);
    if (d.tensor == tensor && d.chunk == chunk && (d.input || d.output)) return i;
  }
  FAIL("no object of tensor " << to_string(tensor) << " for chunk " << chunk);
  return -1;
}

std::vector<float> filled(const Plan& plan, const InputData& inputs, int object) {
  std::vector<float> out(static_cast<std::size_t>(object_extent(plan, object).elements()));
  inputs.fill(object, out);
  return out;
}

// dQ and dKV of every chunk, from run_backward_blocks over every pair of chunks of the same
// head group, with the inputs (saved O, LSE included) the runtime would allocate.
std::map<int, std::vector<float>> backward_by_blocks(const Plan& plan, const InputData& inputs) {
  std::map<int, std::vector<float>> grads;
  const int n = static_cast<int>(plan.chunks.size());
  for (int c = 0; c < n; ++c) {
    for (Tensor t : {Tensor::dq, Tensor::dkv}) {
      const int id = object_of(plan, t, c);
      grads[id].assign(static_cast<std::size_t>(object_extent(plan, id).elements()), 0.0F);
    }
  }
  for (int qc = 0; qc < n; ++qc) {
    const std::vector<float> q = filled(plan, inputs, object_of(plan, Tensor::q, qc));
    const std::vector<float> o = filled(plan, inputs, object_of(plan, Tensor::o, qc));
    const std::vector<float> lse = filled(plan, inputs, object_of(plan, Tensor::lse, qc));
    const std::vector<float> d_o = filled(plan, inputs, object_of(plan, Tensor::d_o, qc));
    for (int kc = 0; kc < n; ++kc) {
      if (plan.chunks[static_cast<std::size_t>(qc)].head_group !=
          plan.chunks[static_cast<std::size_t>(kc)].head_group) {
        continue;
      }
      const std::vector<float> kv = filled(plan, inputs, object_of(plan, Tensor::kv, kc));
      const BackwardSpans spans{q,
                                kv,
                                o,
                                lse,
                                d_o,
                                grads[object_of(plan, Tensor::dq, qc)],
                                grads[object_of(plan, Tensor::dkv, kc)]};
      run_backward_blocks(plan, qc, kc, spans, 1);
    }
  }
  return grads;
}

}  // namespace

TEST_CASE("runtime: a backward-only plan's saved O and LSE are the true forward", "[runtime]") {
  const Plan plan = make("zigzag", 4, true, PassSelection::backward);
  const InputData inputs(plan, 9, InputPrecision::fp32);
  ReferenceOutputs reference(plan, inputs);
  for (int chunk = 0; chunk < 4; ++chunk) {
    for (Tensor t : {Tensor::o, Tensor::lse}) {
      const int id = object_of(plan, t, chunk);
      REQUIRE(plan.object(id).input);
      const std::vector<float> saved = filled(plan, inputs, id);
      const CheckResult r = check_output(plan, reference, id, saved);
      CHECK(r.max_abs_error < 1e-6);
      CHECK(r.max_abs_reference > 0.1);
    }
  }
  // The first row of block 0 sees only itself: O = V at position 0, LSE = its score.
  const std::vector<float> o = filled(plan, inputs, object_of(plan, Tensor::o, 0));
  for (int d = 0; d < 8; ++d) {
    CHECK(o[static_cast<std::size_t>(d)] == Approx(inputs.value(Tensor::kv, 1, 0, 0, 0, d)));
  }
}

TEST_CASE("runtime: head-group objects hold their group's heads", "[runtime]") {
  const Plan plan = make("usp", 4, false, PassSelection::forward, 2, 2);
  REQUIRE(plan.head_groups == 2);
  const kernels::BlockShape shape = block_shape(plan);
  CHECK(shape.heads == 2);
  CHECK(shape.kv_heads == 1);
  CHECK(block_elements(plan, Tensor::q) == 16 * 2 * 8);
  CHECK(block_elements(plan, Tensor::kv) == 2 * 16 * 1 * 8);
  CHECK(block_elements(plan, Tensor::lse) == 2 * 16);
  const InputData inputs(plan, 4, InputPrecision::fp32);
  for (int chunk = 0; chunk < static_cast<int>(plan.chunks.size()); ++chunk) {
    const Chunk& c = plan.chunks[static_cast<std::size_t>(chunk)];
    const HeadRange heads = head_range(plan, chunk);
    CHECK(heads.q_begin == 2 * c.head_group);
    CHECK(heads.kv_begin == c.head_group);
    const std::vector<float> q = filled(plan, inputs, object_of(plan, Tensor::q, chunk));
    const std::vector<float> kv = filled(plan, inputs, object_of(plan, Tensor::kv, chunk));
    const std::int64_t start = plan.layout.block_start(c.blocks[0]);
    for (int t = 0; t < 16; ++t) {
      for (int h = 0; h < 2; ++h) {
        for (int d = 0; d < 8; ++d) {
          const auto i = static_cast<std::size_t>((t * 2 + h) * 8 + d);
          REQUIRE(q[i] == inputs.value(Tensor::q, 0, 0, start + t, heads.q_begin + h, d));
        }
      }
      for (int d = 0; d < 8; ++d) {
        const auto i = static_cast<std::size_t>(t * 8 + d);
        REQUIRE(kv[i] == inputs.value(Tensor::kv, 0, 0, start + t, heads.kv_begin, d));
        REQUIRE(kv[kv.size() / 2 + i] ==
                inputs.value(Tensor::kv, 1, 0, start + t, heads.kv_begin, d));
      }
    }
  }
}

TEST_CASE("runtime: backward block loops give the reference dQ and dKV", "[runtime]") {
  struct Case {
    std::string kind;
    bool causal;
    int kv_heads;
    int ulysses;
  };
  for (const Case& k :
       {Case{"ring", true, 2, 0}, Case{"zigzag", true, 1, 0}, Case{"striped", true, 2, 0},
        Case{"striped", false, 2, 0}, Case{"usp", true, 2, 2}, Case{"ulysses", false, 4, 0}}) {
    INFO(k.kind << " causal " << k.causal << " kv_heads " << k.kv_heads);
    const Plan plan = make(k.kind, 4, k.causal, PassSelection::backward, k.kv_heads, k.ulysses);
    const InputData inputs(plan, 21, InputPrecision::fp32);
    ReferenceOutputs reference(plan, inputs);
    auto grads = backward_by_blocks(plan, inputs);
    CheckResult total;
    for (const auto& [id, values] : grads) total.combine(check_output(plan, reference, id, values));
    CHECK(total.max_abs_error < 1e-5);
    CHECK(total.max_abs_reference > 0.05);
    // A missing contribution is caught: an all-zero dKV fails the check.
    const int last_dkv = object_of(plan, Tensor::dkv, static_cast<int>(plan.chunks.size()) - 1);
    std::vector<float> zero(grads[last_dkv].size(), 0.0F);
    CHECK(check_output(plan, reference, last_dkv, zero).max_abs_error > 1e-3);
  }
}
