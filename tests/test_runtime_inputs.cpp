// Runtime inputs and numerics check: seeded data is a pure function of its coordinates, and
// the check measures the real distance to the reference.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "kernels/cpu/attention_cpu.hpp"
#include "runtime/executor/input_data.hpp"
#include "runtime/executor/numerics_check.hpp"
#include "runtime/executor/object_layout.hpp"
#include "runtime/executor/reference_outputs.hpp"
#include "sim/schedules/schedule.hpp"

using namespace tilesim;
using namespace tilesim::runtime;

namespace {

AttentionShape small_shape(bool causal) {
  AttentionShape s;
  s.seq_len = 96;
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 16;
  s.dtype = DType::fp32;
  s.causal = causal;
  return s;
}

Plan ring(int gpus, bool causal) {
  ScheduleSpec spec;
  spec.gpus = gpus;
  return make_plan(small_shape(causal), spec);
}

int object_named(const Plan& plan, const std::string& name) {
  for (int i = 0; i < static_cast<int>(plan.objects.size()); ++i) {
    if (plan.object(i).name == name) return i;
  }
  FAIL("no object " << name);
  return -1;
}

// Final O/LSE of chunk `chunk` computed with the fast CPU kernels block by block.
void run_chunk(const Plan& plan, const InputData& inputs, int chunk, std::vector<float>& o,
               std::vector<float>& lse) {
  const kernels::RowsShape rows = block_rows(plan);
  o.assign(static_cast<std::size_t>(rows.o_elements()), 0.0F);
  lse.assign(static_cast<std::size_t>(rows.lse_elements()), -INFINITY);
  std::vector<float> q(static_cast<std::size_t>(block_elements(plan, Tensor::q)));
  inputs.fill(object_named(plan, "Q[" + std::to_string(chunk) + "]"), q);
  std::vector<float> bo(o.size()), bl(lse.size());
  for (int k = 0; k < plan.ranks; ++k) {
    if (plan.layout.mask(chunk, k, plan.shape.mask) == BlockPairMask::skip) continue;
    std::vector<float> kv(static_cast<std::size_t>(block_elements(plan, Tensor::kv)));
    inputs.fill(object_named(plan, "KV[" + std::to_string(k) + "]"), kv);
    const std::span<const float> all(kv);
    kernels::attention_forward_cpu(block_shape(plan), kernel_mask(plan, chunk, k), q,
                                   all.first(kv.size() / 2), all.last(kv.size() / 2), bo, bl);
    kernels::accumulate_partial_cpu(rows, bo, bl, o, lse);
  }
}

}  // namespace

TEST_CASE("runtime: inputs are a pure function of seed and coordinates", "[runtime]") {
  const Plan plan = ring(4, false);
  const InputData a(plan, 5, InputPrecision::fp32);
  const InputData b(plan, 5, InputPrecision::fp32);
  const InputData c(plan, 6, InputPrecision::fp32);
  const int kv2 = object_named(plan, "KV[2]");
  std::vector<float> x(static_cast<std::size_t>(object_extent(plan, kv2).elements()));
  std::vector<float> y(x.size()), z(x.size());
  a.fill(kv2, x);
  b.fill(kv2, y);
  c.fill(kv2, z);
  CHECK(x == y);
  CHECK(x != z);
  // KV[2] holds positions 48..71: its V part equals the full sequence's V at those positions.
  const std::vector<double> v = a.full_kv(1);
  const std::size_t row = 2 * 16;  // kv_heads * head_dim
  for (std::size_t i = 0; i < x.size() / 2; ++i) {
    REQUIRE(x[x.size() / 2 + i] == static_cast<float>(v[48 * row + i]));
  }
  for (float value : x) {
    REQUIRE(value >= -1.0F);
    REQUIRE(value < 1.0F);
  }
}

TEST_CASE("runtime: bf16 rounding keeps 8 significant bits, to nearest even", "[runtime]") {
  CHECK(round_to(InputPrecision::bf16, 1.0F) == 1.0F);
  CHECK(round_to(InputPrecision::bf16, 1.0F + 1.0F / 512) == 1.0F);               // tie -> even
  CHECK(round_to(InputPrecision::bf16, 1.0F + 3.0F / 512) == 1.0F + 1.0F / 128);  // tie -> even
  CHECK(round_to(InputPrecision::bf16, -0.3F) == Approx(-0.30078125F));
  CHECK(round_to(InputPrecision::fp32, 0.3F) == 0.3F);
}

TEST_CASE("runtime: the check matches the reference and measures a perturbation", "[runtime]") {
  for (bool causal : {false, true}) {
    const Plan plan = ring(4, causal);
    const InputData inputs(plan, 3, InputPrecision::fp32);
    ReferenceOutputs reference(plan, inputs);
    for (int chunk = 0; chunk < 4; ++chunk) {
      std::vector<float> o, lse;
      run_chunk(plan, inputs, chunk, o, lse);
      const int o_id = object_named(plan, "O[" + std::to_string(chunk) + "]");
      const int lse_id = object_named(plan, "LSE[" + std::to_string(chunk) + "]");
      CheckResult good = check_output(plan, reference, o_id, o);
      good.combine(check_output(plan, reference, lse_id, lse));
      CHECK(good.max_abs_error < 1e-5);
      CHECK(good.values == static_cast<std::int64_t>(o.size() + lse.size()));
      CHECK(good.max_abs_reference > 0.1);
      o[7] += 0.01F;
      const CheckResult bad = check_output(plan, reference, o_id, o);
      CHECK(bad.max_abs_error == Approx(0.01).epsilon(0.01));
      CHECK_THROWS_AS(check_output(plan, reference, o_id, lse), std::invalid_argument);
    }
  }
}
