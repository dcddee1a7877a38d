#include <catch2/catch.hpp>

#include "sim/schedules/mesh_order.hpp"

using namespace tilesim;

TEST_CASE("mesh: step orders obey the ring restrictions") {
  using S = MeshStep;
  CHECK(mesh_order_allowed(2, 2, {S::q, S::kv, S::reduce}, {}));
  CHECK(mesh_order_allowed(2, 2, {S::kv, S::q, S::reduce}, {}));
  CHECK_FALSE(mesh_order_allowed(2, 2, {S::q, S::reduce, S::kv}, {}));  // R before all KV
  CHECK_FALSE(mesh_order_allowed(2, 2, {S::q, S::kv}, {}));             // R missing
  CHECK_FALSE(mesh_order_allowed(3, 1, {S::reduce, S::q, S::q, S::reduce}, {}));
  // A KV window of 2 on a 2x4 tile: the third KV recv needs the Q ring done.
  CHECK_FALSE(mesh_order_allowed(2, 4, {S::kv, S::kv, S::kv, S::q, S::reduce}, {0, 2}));
  CHECK(mesh_order_allowed(2, 4, {S::kv, S::kv, S::q, S::kv, S::reduce}, {0, 2}));
  CHECK_THROWS_AS(mesh_order_allowed(2, 2, {}, {1, 0}), std::invalid_argument);
}

TEST_CASE("mesh: the number of allowed orders matches the combinatorics") {
  // a x 1 (pass-Q): R_s after Q_s and all Q before... ballot sequences, Catalan(a-1).
  CHECK(all_mesh_orders(2, 1, {}).size() == 1);
  CHECK(all_mesh_orders(3, 1, {}).size() == 2);
  CHECK(all_mesh_orders(4, 1, {}).size() == 5);
  CHECK(all_mesh_orders(5, 1, {}).size() == 14);
  // 1 x b (ring): only KV steps.
  CHECK(all_mesh_orders(1, 6, {}).size() == 1);
  // 2 x b: the one Q step anywhere among the b-1 KV steps, then R: b orders.
  CHECK(all_mesh_orders(2, 4, {}).size() == 4);
  for (const MeshOrder& o : all_mesh_orders(3, 3, {})) CHECK(mesh_order_allowed(3, 3, o, {}));
}

TEST_CASE("mesh: greedy unlocks the most blocks per byte") {
  // MHA: kv = 2q. From (1 Q, 1 KV): Q unlocks 1/q, KV 1/(2q) -> Q; then tie
  // 1/q vs 2/(2q) -> smaller step (Q); then (3 Q, 1 KV): KV 3/(2q) > 1/q.
  const MeshOrder o = greedy_mesh_order(4, 4, 1.0, 2.0, {});
  CHECK(to_string(o) == "QQKQKKRRR");
  CHECK(mesh_order_allowed(4, 4, o, {}));
  // GQA with kv = q/2: KV steps first until Q's turn pays; once the KV ring is
  // done an R step follows each Q step.
  CHECK(to_string(greedy_mesh_order(3, 3, 1.0, 0.5, {})) == "KKQRQR");
  CHECK(to_string(greedy_mesh_order(4, 2, 1.0, 2.0, {})) == "QQKRQRR");
  // Windows: with a KV window of 2 on 2x6 the Q ring must finish before KV #3.
  const MeshOrder w = greedy_mesh_order(2, 6, 1.0, 2.0, {0, 2});
  CHECK(mesh_order_allowed(2, 6, w, {0, 2}));
  // Both windows smaller than their rings: no order exists.
  CHECK_THROWS_AS(greedy_mesh_order(4, 4, 1.0, 2.0, {2, 2}), std::invalid_argument);
}
