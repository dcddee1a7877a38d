// ring_steps, ring_back_steps and route_keys_by_readers find a key's readers from the mask's
// visible hull of each query block (ring_passes.cpp, KeyReaders) instead of asking every
// (member, key) pair. Checked here against the definitions written out pair by pair with
// Plan::unmasked_pairs (the scan those functions ran before): ring (contiguous blocks), zigzag
// (two blocks per rank) and striped (blocks spanning the sequence, where no hull applies),
// under the full, causal, sliding-window and documents masks, 2 to 64 ranks, and a window of
// 256 ranks that takes the few-candidates path.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/ring_passes.hpp"
#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

int wrap(int x, int m) { return ((x % m) + m) % m; }

bool reads(const Plan& plan, const RingMember& reader, const RingKey& key) {
  return std::any_of(reader.queries.begin(), reader.queries.end(), [&](const RingQuery& q) {
    return plan.unmasked_pairs(q.chunk, key.chunk) > 0;
  });
}

bool reads_any(const Plan& plan, const RingMember& reader, const std::vector<RingKey>& keys) {
  return std::any_of(keys.begin(), keys.end(),
                     [&](const RingKey& key) { return reads(plan, reader, key); });
}

// 1 + the largest offset s at which some member k reads the bundle of member k - s (forward
// keys) or k + s (back keys).
int steps_by_definition(const Plan& plan, const std::vector<RingMember>& ring, bool back) {
  const int m = static_cast<int>(ring.size());
  for (int s = m - 1; s > 0; --s) {
    for (int k = 0; k < m; ++k) {
      const RingMember& owner = ring[static_cast<std::size_t>(wrap(back ? k + s : k - s, m))];
      if (reads_any(plan, ring[static_cast<std::size_t>(k)], back ? owner.back_keys : owner.keys)) {
        return s + 1;
      }
    }
  }
  return 1;
}

// route_keys_by_readers' rule, reader by reader.
std::vector<RingMember> routed_by_definition(const Plan& plan, std::vector<RingMember> ring) {
  const int m = static_cast<int>(ring.size());
  const int one_way = steps_by_definition(plan, ring, false);
  std::vector<RingMember> two_way = ring, forward_only = ring;
  for (int k = 0; k < m; ++k) {
    const auto i = static_cast<std::size_t>(k);
    two_way[i].keys.clear();
    forward_only[i].keys.clear();
    for (const RingKey& key : ring[i].keys) {
      int forward = 0, back = 0;
      for (int d = 1; d < m; ++d) {
        if (reads(plan, ring[static_cast<std::size_t>(wrap(k + d, m))], key)) forward = d;
        if (reads(plan, ring[static_cast<std::size_t>(wrap(k - d, m))], key)) back = d;
      }
      RingKey routed = key;
      routed.hops = forward;
      forward_only[i].keys.push_back(routed);
      routed.hops = std::min(forward, back);
      (forward <= back ? two_way[i].keys : two_way[i].back_keys).push_back(routed);
    }
  }
  const int two_way_steps =
      std::max(steps_by_definition(plan, two_way, false), steps_by_definition(plan, two_way, true));
  return two_way_steps < one_way ? two_way : forward_only;
}

std::vector<std::pair<int, int>> hops_of(const std::vector<RingKey>& keys) {
  std::vector<std::pair<int, int>> out;
  for (const RingKey& key : keys) out.emplace_back(key.chunk, key.hops);
  return out;
}

struct Layout {
  std::string schedule;
  ChunkOwnership ownership;
};

// tokens_per_block tokens in each of the 2P blocks (zigzag's count; ring and striped cut the
// same S into P chunks).
AttentionShape shape_of(const AttentionMask& mask, int ranks, std::int64_t tokens_per_block) {
  AttentionShape s = shape_with(true, true, PassSelection::forward,
                                2 * static_cast<std::int64_t>(ranks) * tokens_per_block);
  s.set_mask(mask);
  return s;
}

std::vector<AttentionMask> masks_for(std::int64_t seq_len, std::int64_t chunk) {
  std::vector<AttentionMask> masks;
  AttentionMask full;
  masks.push_back(full);
  AttentionMask causal;
  causal.kind = AttentionMaskKind::causal;
  masks.push_back(causal);
  for (const std::int64_t w : {std::int64_t{1}, chunk / 2, chunk, 2 * chunk + 1, seq_len / 3}) {
    AttentionMask window;
    window.kind = AttentionMaskKind::sliding_window;
    window.window_tokens = w;
    masks.push_back(window);
  }
  masks.push_back(documents_mask({seq_len / 4, seq_len / 2, seq_len / 4}));
  masks.push_back(documents_mask({chunk + 3, seq_len - chunk - 3}));
  return masks;
}

void check_against_definition(const Layout& layout, int ranks, const AttentionMask& mask) {
  const AttentionShape shape = shape_of(mask, ranks, 64);
  const Plan plan = make_chunked_plan(layout.schedule, shape, ranks, layout.ownership);
  std::vector<RingMember> ring;
  for (int r = 0; r < ranks; ++r) ring.push_back(RingMember{r, {RingQuery{r}}, {RingKey{r}}});
  INFO(layout.schedule << " on " << ranks << " ranks, mask " << to_string(mask.kind) << ", window "
                       << mask.window_tokens << ", documents " << mask.document_starts.size());
  CHECK(ring_steps(plan, ring) == steps_by_definition(plan, ring, false));
  CHECK(ring_back_steps(plan, ring) == 1);  // no back keys

  std::vector<RingMember> routed = ring;
  route_keys_by_readers(plan, routed);
  const std::vector<RingMember> expected = routed_by_definition(plan, ring);
  for (std::size_t k = 0; k < ring.size(); ++k) {
    CHECK(hops_of(routed[k].keys) == hops_of(expected[k].keys));
    CHECK(hops_of(routed[k].back_keys) == hops_of(expected[k].back_keys));
  }
  CHECK(ring_steps(plan, routed) == steps_by_definition(plan, routed, false));
  CHECK(ring_back_steps(plan, routed) == steps_by_definition(plan, routed, true));
}

}  // namespace

TEST_CASE("ring steps from the mask's hull equal the pair-by-pair definition") {
  const std::vector<Layout> layouts = {{"ring", ChunkOwnership::contiguous},
                                       {"zigzag", ChunkOwnership::zigzag},
                                       {"striped", ChunkOwnership::striped}};
  for (const Layout& layout : layouts) {
    for (const int ranks : {2, 3, 8, 16, 64}) {
      const std::int64_t seq_len = 2 * static_cast<std::int64_t>(ranks) * 64;
      for (const AttentionMask& mask : masks_for(seq_len, seq_len / ranks)) {
        check_against_definition(layout, ranks, mask);
      }
    }
  }
}

TEST_CASE("ring steps under a window on 256 ranks: the farthest reader, found from the hull") {
  // Contiguous chunks of c = 128 tokens, W = 300: a query block sees keys back to 299 tokens
  // before its first query, so the farthest reader of a chunk is 1 + floor(299 / 128) = 3
  // chunks on: 4 steps (ring_passes.hpp: n = 1 + ceil((W - 1) / c)).
  AttentionMask window;
  window.kind = AttentionMaskKind::sliding_window;
  window.window_tokens = 300;
  const AttentionShape shape = shape_of(window, 256, 64);
  const Plan plan = make_chunked_plan("ring", shape, 256, ChunkOwnership::contiguous);
  std::vector<RingMember> ring;
  for (int r = 0; r < 256; ++r) ring.push_back(RingMember{r, {RingQuery{r}}, {RingKey{r}}});
  CHECK(ring_steps(plan, ring) == 4);
  CHECK(steps_by_definition(plan, ring, false) == 4);
}
