#include "sim/schedules/schedule_kinds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/schedules/double_ring_schedule.hpp"
#include "sim/schedules/pass_q_schedule.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/schedules/striped_schedule.hpp"
#include "sim/schedules/usp_grid.hpp"
#include "sim/schedules/usp_schedule.hpp"
#include "sim/schedules/zigzag_schedule.hpp"

namespace tilesim {
namespace {

// Pass-Q is an inference schedule (Meta's context parallelism for
// million-token inference, arXiv 2411.01783, uses it for prefill and decode);
// no implementation defines its backward, so tilesim does not invent one.
void require_forward_only(const AttentionShape& shape, const ScheduleSpec& spec) {
  if (shape.has_backward()) {
    throw ScheduleError(
        "attention.pass",
        fmt::format("schedule '{}' builds the forward pass only: pass-Q comes from inference "
                    "(prefill/decode), where no implementation defines a backward; pass must be "
                    "forward (backward: ring, zigzag, striped, ulysses, usp, mesh, allgather_kv, "
                    "double_ring)",
                    spec.kind));
  }
}

}  // namespace

int usp_ulysses_degree(const AttentionShape& shape, const ScheduleSpec& spec) {
  if (spec.ulysses_degree > 0) return spec.ulysses_degree;
  const int limit = std::max(1, std::min(spec.gpus, spec.gpus_per_node));
  for (int u = limit; u > 1; --u) {
    if (spec.gpus % u == 0 && shape.heads % u == 0 && shape.kv_heads % u == 0) return u;
  }
  return 1;
}

void check_kind_fits_shape(const AttentionShape& shape, const ScheduleSpec& spec) {
  if (spec.kind == "pass_q") require_forward_only(shape, spec);
  if (spec.kind != "ulysses" && spec.kind != "usp") return;
  const int u = spec.kind == "ulysses" ? spec.gpus : usp_ulysses_degree(shape, spec);
  (void)usp_grid(shape, spec.gpus, u, spec.kind);
}

int double_ring_inner_size(const ScheduleSpec& spec) {
  return spec.inner_ring > 0 ? spec.inner_ring : std::gcd(spec.gpus, spec.gpus_per_node);
}

bool make_standard_plan(const AttentionShape& shape, const ScheduleSpec& spec, Plan& out) {
  const std::string& k = spec.kind;
  const int p = spec.gpus;
  const bool by_work = spec.balance == TokenBalance::work;
  if (k == "ring") {
    out = by_work ? make_pass_kv_ring_plan("ring", shape, p, ChunkOwnership::work)
                  : make_ring_plan(shape, p);
  } else if (k == "zigzag") {
    out = make_zigzag_plan(shape, p);
  } else if (k == "striped") {
    out = make_striped_plan(shape, p);
  } else if (k == "ulysses") {
    out = make_ulysses_plan(shape, p);
  } else if (k == "usp") {
    out = make_usp_plan(shape, p, usp_ulysses_degree(shape, spec));
  } else if (k == "pass_q") {
    require_forward_only(shape, spec);
    out = make_pass_q_plan(shape, p);
  } else if (k == "allgather_kv") {
    out = make_allgather_kv_plan(shape, p, by_work);
  } else if (k == "double_ring") {
    out = make_double_ring_plan(shape, p, double_ring_inner_size(spec));
  } else {
    return false;
  }
  return true;
}

}  // namespace tilesim
