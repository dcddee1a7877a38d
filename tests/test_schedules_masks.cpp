// Bytes and FLOPs per rank under sliding-window and document masks, hand-derived (docs/
// schedules.md "Masks"), and the work-balancing assignment on a packed 1M-token batch.
#include <catch2/catch.hpp>

#include "sim/scenario/document_lengths.hpp"
#include "sim/schedules/mesh_memory.hpp"
#include "sim/schedules/mesh_schedule.hpp"
#include "sim/schedules/work_balance.hpp"
#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

AttentionShape window_shape(std::int64_t seq_len, std::int64_t window, PassSelection pass) {
  AttentionShape s = shape_with(true, true, pass, seq_len);
  AttentionMask m;
  m.kind = AttentionMaskKind::sliding_window;
  m.window_tokens = window;
  s.set_mask(m);
  return s;
}

double kv_bytes(const AttentionShape& s, double tokens) {
  return 2.0 * s.batch * tokens * s.kv_heads * s.head_dim * 2.0;  // bf16
}

}  // namespace

TEST_CASE("masks: ring with W = 4K at 1M tokens on 64 ranks moves one KV chunk per rank") {
  // c = 1M / 64 = 16K tokens >= W, so the window of a rank's first query reaches back into the
  // previous chunk only: n = 1 + ceil((W-1)/c) = 2 ring steps, one KV chunk received per rank:
  // 2 * b * c * Hkv * d * e = 2 * 16384 * 8 * 128 * 2 = 67,108,864 bytes.
  const AttentionShape fwd = window_shape(1 << 20, 4096, PassSelection::forward);
  const PlanReport report = validate_plan(plan_of("ring", fwd, 64));
  INFO(errors_of(report));
  REQUIRE(report.ok());
  for (const RankStats& r : report.ranks) {
    CHECK(r.bytes_received == 67'108'864.0);
    CHECK(r.bytes_sent == 67'108'864.0);
  }
  // FLOPs: a query sees exactly W keys except rank 0's first W-1 queries, so rank r > 0 has
  // c*W pairs and rank 0 c*W - W(W-1)/2; forward FLOPs 4*b*H*d per pair.
  const double c = 16384.0, w = 4096.0, per_pair = 4.0 * 1 * 32 * 128;
  CHECK(report.ranks[0].compute_flops == Approx(per_pair * (c * w - w * (w - 1) / 2)));
  for (int r = 1; r < 64; ++r) {
    CHECK(report.ranks[static_cast<std::size_t>(r)].compute_flops == Approx(per_pair * c * w));
  }
}

TEST_CASE("masks: ring window bytes for several steps, forward and backward") {
  // S = 48K, P = 8: c = 6K; W = 13K: n = 1 + ceil((13312-1)/6144) = 1 + 3 = 4 steps.
  // Forward: 3 KV chunks received. Backward: 3 KV + 4 dKV (fp32) hops (the last one home).
  const int p = 8;
  const AttentionShape fwd = window_shape(48 * 1024, 13 * 1024, PassSelection::forward);
  const ChunkBytes b = chunk_bytes(fwd, p);
  const PlanReport f = validate_plan(plan_of("ring", fwd, p));
  INFO(errors_of(f));
  REQUIRE(f.ok());
  for (const RankStats& r : f.ranks) CHECK(r.bytes_received == Approx(3 * b.kv));
  const AttentionShape bwd = window_shape(48 * 1024, 13 * 1024, PassSelection::backward);
  const PlanReport g = validate_plan(plan_of("ring", bwd, p));
  INFO(errors_of(g));
  REQUIRE(g.ok());
  for (const RankStats& r : g.ranks) CHECK(r.bytes_received == Approx(3 * b.kv + 4 * b.dkv));
  // A window as long as the sequence is the causal ring: P-1 KV chunks.
  const PlanReport whole =
      validate_plan(plan_of("ring", window_shape(48 * 1024, 48 * 1024, PassSelection::forward), p));
  for (const RankStats& r : whole.ranks) CHECK(r.bytes_received == Approx((p - 1) * b.kv));
}

TEST_CASE("masks: zigzag under W = 4K at 1M tokens on 64 ranks moves one KV chunk per rank") {
  // Two-direction ring (zigzag_schedule.hpp): blocks of h = 1M / 128 = 8K tokens >= W, so a
  // query block reads only itself and the block before it: low block r is read by low block
  // r+1 (rank r+1, one hop towards r+1) and high block 2P-1-r by 2P-r (rank r-1, one hop
  // towards r-1). Rank r receives two half chunks, one kv = 2 * b * c * Hkv * d * e =
  // 67,108,864 bytes (the one-way zigzag ring moved 63 kv); ranks 0 and 63 receive one half.
  // Backward: kv + 2 dkv (dKV follows its block and comes home), kv/2 + dkv at the ends.
  const AttentionShape both = window_shape(1 << 20, 4096, PassSelection::both);
  const PlanReport report = validate_plan(plan_of("zigzag", both, 64));
  INFO(errors_of(report));
  REQUIRE(report.ok());
  const double kv = 67'108'864.0, dkv = 134'217'728.0;
  for (int r = 0; r < 64; ++r) {
    INFO("rank " << r);
    const double end = r == 0 || r == 63 ? 0.5 : 1.0;
    const RankStats& st = report.ranks[static_cast<std::size_t>(r)];
    CHECK(st.bytes_received == end * (kv + (kv + 2 * dkv)));
    CHECK(st.bytes_sent == end * (kv + (kv + 2 * dkv)));
  }
  // FLOPs as the contiguous ring's: every query sees W keys except the sequence's first W-1
  // (rank 0's low block); forward FLOPs 4*b*H*d per pair.
  const AttentionShape fwd = window_shape(1 << 20, 4096, PassSelection::forward);
  const PlanReport f = validate_plan(plan_of("zigzag", fwd, 64));
  REQUIRE(f.ok());
  const double c = 16384.0, w = 4096.0, per_pair = 4.0 * 1 * 32 * 128;
  CHECK(f.ranks[0].compute_flops == Approx(per_pair * (c * w - w * (w - 1) / 2)));
  for (int r = 1; r < 64; ++r) {
    CHECK(f.ranks[static_cast<std::size_t>(r)].compute_flops == Approx(per_pair * c * w));
  }
}

namespace {

// Bytes received per rank by zigzag's two-direction ring, counted from token visibility
// (independent of the mask's closed forms and of ring_passes): block b of h tokens, owned by
// o = b < P ? b : 2P-1-b, is read by rank y if some query of blocks y, 2P-1-y sees some key of
// b; with F (G) the largest such offset towards o+1 (o-1) it travels min(F, G) hops that way
// (ties: low blocks forward); each hop's receiver gets kv/2 (backward also dkv/2), and the
// owner gets its dKV back (dkv/2) when the block travelled.
struct ZigzagHopBytes {
  std::vector<double> fwd, bwd;
};

ZigzagHopBytes zigzag_hop_bytes(const AttentionShape& s, int p) {
  const std::int64_t h = s.seq_len / (2 * p);
  const ChunkBytes c = chunk_bytes(s, p);
  const auto block_reads = [&](int qb, int kb) {
    for (std::int64_t i = qb * h; i < (qb + 1) * h; ++i) {
      for (std::int64_t j = kb * h; j < (kb + 1) * h; ++j) {
        if (s.mask.visible(i, j)) return true;
      }
    }
    return false;
  };
  const auto reads = [&](int y, int b) {
    return block_reads(y, b) || block_reads(2 * p - 1 - y, b);
  };
  ZigzagHopBytes out{std::vector<double>(static_cast<std::size_t>(p), 0.0),
                     std::vector<double>(static_cast<std::size_t>(p), 0.0)};
  int max_hops = 0;
  for (int b = 0; b < 2 * p; ++b) {
    const int o = b < p ? b : 2 * p - 1 - b;
    int f = 0, g = 0;
    for (int d = 1; d < p; ++d) {
      if (reads((o + d) % p, b)) f = d;
      if (reads((o - d + p) % p, b)) g = d;
    }
    const bool forward = f < g || (f == g && b < p);
    const int hops = forward ? f : g;
    for (int j = 1; j <= hops; ++j) {
      const auto y = static_cast<std::size_t>(((forward ? o + j : o - j) % p + p) % p);
      out.fwd[y] += c.kv / 2;
      out.bwd[y] += c.kv / 2 + c.dkv / 2;
    }
    if (hops > 0) out.bwd[static_cast<std::size_t>(o)] += c.dkv / 2;
    max_hops = std::max(max_hops, hops);
  }
  // As long as the one-way ring (P steps: block 2P-1-r reads 2P-2-r, one rank up): zigzag
  // keeps the one-way ring, (P-1) kv forward, (P-1) kv + P dkv backward.
  if (max_hops + 1 >= p) {
    out.fwd.assign(static_cast<std::size_t>(p), (p - 1) * c.kv);
    out.bwd.assign(static_cast<std::size_t>(p), (p - 1) * c.kv + p * c.dkv);
  }
  return out;
}

}  // namespace

TEST_CASE("masks: zigzag two-direction ring bytes match the hop rule for windows and documents") {
  // S = 768, P = 8, blocks of h = 48 tokens. W = 40 (one block back), 110 (three: every block
  // read on one side only, but low block 7 by the high blocks of ranks 6 and 5, so it goes
  // back), 200 (five: low block 6 is read by ranks 7 and 4, 5, on both sides; going round to
  // reach them all takes 7 hops, so zigzag keeps its one-way ring) and documents 100 + 60 +
  // 300 + 8 + 300 tokens.
  const int p = 8;
  std::vector<AttentionShape> shapes;
  for (std::int64_t w : {40, 110, 200}) shapes.push_back(window_shape(768, w, PassSelection::both));
  AttentionShape docs = shape_with(true, true, PassSelection::both, 768);
  docs.set_mask(documents_mask({100, 60, 300, 8, 300}));
  shapes.push_back(docs);
  for (const AttentionShape& s : shapes) {
    INFO("mask " << to_string(s.mask.kind) << " window " << s.mask.window_tokens);
    const PlanReport report = validate_plan(plan_of("zigzag", s, p));
    INFO(errors_of(report));
    REQUIRE(report.ok());
    AttentionShape fwd = s, bwd = s;
    fwd.pass = PassSelection::forward;
    bwd.pass = PassSelection::backward;
    const ZigzagHopBytes want = zigzag_hop_bytes(s, p);
    const PlanReport f = validate_plan(plan_of("zigzag", fwd, p));
    const PlanReport g = validate_plan(plan_of("zigzag", bwd, p));
    REQUIRE(f.ok());
    REQUIRE(g.ok());
    for (int r = 0; r < p; ++r) {
      INFO("rank " << r);
      const auto i = static_cast<std::size_t>(r);
      CHECK(f.ranks[i].bytes_received == Approx(want.fwd[i]));
      CHECK(g.ranks[i].bytes_received == Approx(want.bwd[i]));
    }
  }
  // W = 110 by hand: d = ceil(109/48) = 3 blocks back, every rank but the ends receives
  // 3 half chunks each way = 3 kv forward (ranks 0 and 7: the 3 halves of one side).
  const AttentionShape w110 = window_shape(768, 110, PassSelection::forward);
  const ChunkBytes b = chunk_bytes(w110, p);
  const PlanReport f = validate_plan(plan_of("zigzag", w110, p));
  CHECK(f.ranks[3].bytes_received == Approx(3 * b.kv));
  // A window of the whole sequence needs every step both ways: zigzag keeps its one-way ring
  // and the causal bytes, (P-1) kv.
  const PlanReport whole =
      validate_plan(plan_of("zigzag", window_shape(768, 768, PassSelection::forward), p));
  REQUIRE(whole.ok());
  for (const RankStats& r : whole.ranks) CHECK(r.bytes_received == Approx((p - 1) * b.kv));
}

TEST_CASE("masks: striped ring under a window shorter than P runs W steps") {
  // Striped chunk r holds positions r, r+P, ...; with W <= P a query at r + aP sees the W
  // positions r-W+1 .. r, one of each chunk r, r-1, ..., r-W+1 (mod P), which the ring brings
  // in steps 0 .. W-1: n = W. Forward (W-1) kv; backward (W-1) kv + W dkv. Pairs: every query
  // sees W keys except positions p < W-1 (p+1 keys), one per rank r < W-1:
  // c W - max(0, W-1-r). S = 4096, P = 8, c = 512, W = 5.
  const int p = 8;
  const AttentionShape fwd = window_shape(4096, 5, PassSelection::forward);
  const ChunkBytes b = chunk_bytes(fwd, p);
  const PlanReport f = validate_plan(plan_of("striped", fwd, p));
  INFO(errors_of(f));
  REQUIRE(f.ok());
  const double c = 512.0, w = 5.0, per_pair = 4.0 * 1 * 32 * 128;
  for (int r = 0; r < p; ++r) {
    INFO("rank " << r);
    const RankStats& st = f.ranks[static_cast<std::size_t>(r)];
    CHECK(st.bytes_received == Approx(4 * b.kv));
    CHECK(st.compute_flops == Approx(per_pair * (c * w - std::max(0, 4 - r))));
  }
  const AttentionShape bwd = window_shape(4096, 5, PassSelection::backward);
  const PlanReport g = validate_plan(plan_of("striped", bwd, p));
  INFO(errors_of(g));
  REQUIRE(g.ok());
  for (const RankStats& r : g.ranks) CHECK(r.bytes_received == Approx(4 * b.kv + 5 * b.dkv));
}

TEST_CASE("masks: all-gather KV fetches only the chunks the window needs") {
  // Zigzag chunks of 2 blocks of S/2P = 3K tokens, W = 2K <= 3K: block r needs block r-1
  // (rank r-1), block 2P-1-r needs block 2P-2-r (rank r+1). Ranks 0 and P-1 need one chunk.
  const int p = 8;
  const AttentionShape fwd = window_shape(48 * 1024, 2048, PassSelection::forward);
  const PlanReport report = validate_plan(plan_of("allgather_kv", fwd, p));
  INFO(errors_of(report));
  REQUIRE(report.ok());
  const double kv = kv_bytes(fwd, 48.0 * 1024 / p);
  for (int r = 0; r < p; ++r) {
    INFO("rank " << r);
    CHECK(report.ranks[static_cast<std::size_t>(r)].bytes_received ==
          Approx(r == 0 || r == p - 1 ? kv : 2 * kv));
  }
}

TEST_CASE("masks: pass-Q, double ring and USP under a window: bytes and FLOPs") {
  // S = 48K, P = 8, c = 6K, W = 2K. Pass-Q under a window takes contiguous chunks: Q[i] is
  // read only by rank i-1 (the last W-1 keys of chunk i-1), so it travels one hop towards
  // r-1 (two steps in all) and rank i-1 sends one partial O, LSE straight back: rank r
  // receives [r <= P-2] q and [r >= 1] (o + lse), against the full ring's (P-1) q. The
  // double ring (one inner ring of 8 here, contiguous chunks under a window) brings chunk r-1
  // only, one hop: [r >= 1] kv (the two-level case is the next test). USP (u = 2, 4 ring
  // groups G over zigzag chunks): group G holds chunks 2G, 2G+1; chunk 2G+1 is read by group
  // G+1 (one hop forward), chunk 2G by group G-1 (one hop back), so the ring brings
  // ([G >= 1] + [G <= 2]) slices of kv/u after the all-to-all's (u-1)/u (q + kv + of).
  // FLOPs: every query sees W keys but the sequence's first W-1, so the double ring's rank r
  // (Q[r] against all KV) has c W pairs, rank 0 c W - W(W-1)/2. Pass-Q's rank r computes KV[r]
  // against Q[r] (c W - W(W-1)/2 pairs) and Q[r+1] (W(W-1)/2): c W, but rank P-1 (no Q[P])
  // c W - W(W-1)/2.
  // USP's rank in group G computes its group's 2 chunks for H/u heads:
  // (2 c W - [G = 0] W(W-1)/2) / u pairs' FLOPs.
  const int p = 8;
  const AttentionShape fwd = window_shape(48 * 1024, 2048, PassSelection::forward);
  const ChunkBytes b = chunk_bytes(fwd, p);
  const double c = 6144.0, w = 2048.0, per_pair = 4.0 * 32 * 128, edge = w * (w - 1) / 2;
  const PlanReport pq = validate_plan(plan_of("pass_q", fwd, p));
  INFO(errors_of(pq));
  REQUIRE(pq.ok());
  const PlanReport dr = validate_plan(plan_of("double_ring", fwd, p));
  REQUIRE(dr.ok());
  for (int r = 0; r < p; ++r) {
    INFO("rank " << r);
    const auto i = static_cast<std::size_t>(r);
    CHECK(pq.ranks[i].bytes_received ==
          Approx((r <= p - 2 ? b.q : 0.0) + (r >= 1 ? b.o + b.lse : 0.0)));
    CHECK(dr.ranks[i].bytes_received == Approx(r >= 1 ? b.kv : 0.0));
    CHECK(dr.ranks[i].compute_flops == Approx(per_pair * (c * w - (r == 0 ? edge : 0.0))));
    CHECK(pq.ranks[i].compute_flops == Approx(per_pair * (c * w - (r == p - 1 ? edge : 0.0))));
  }
  for (PassSelection pass : {PassSelection::forward, PassSelection::backward}) {
    const AttentionShape s = window_shape(48 * 1024, 2048, pass);
    const PlanReport usp = validate_plan(plan_of("usp", s, p, 2));
    INFO(errors_of(usp));
    REQUIRE(usp.ok());
    for (int x = 0; x < p; ++x) {
      const int g = x / 2, hops = (g >= 1) + (g <= 2);
      INFO("rank " << x << " group " << g);
      const RankStats& st = usp.ranks[static_cast<std::size_t>(x)];
      if (pass == PassSelection::forward) {
        CHECK(st.bytes_received == Approx(0.5 * (b.q + b.kv + b.of) + hops * b.kv / 2));
        CHECK(st.compute_flops == Approx(per_pair * (2 * c * w - (g == 0 ? edge : 0.0)) / 2));
      } else {
        // dO in, dQ and dKV back (dKV a partial, r > 1); the ring's dKV follows each slice
        // and comes home: hops (kv + 2 dkv) / u. Backward FLOPs 10 b H d per pair.
        CHECK(st.bytes_received ==
              Approx(0.5 * (b.q + b.of + b.dkv) + hops * (b.kv + 2 * b.dkv) / 2));
        CHECK(st.compute_flops == Approx(2.5 * per_pair * (2 * c * w - (g == 0 ? edge : 0.0)) / 2));
      }
    }
  }
}

TEST_CASE("masks: pass-Q under a window of more than two chunks: Q goes only to its readers") {
  // S = 8K, P = 8, c = 1K, W = 2500: the first query of chunk i (1024 i) sees keys from
  // 1024 i - 2499 on, inside chunk i-3 (1024 i - 3072 .. 1024 i - 2049), so Q[i] is read by
  // ranks i-1, i-2 and i-3: it travels min(3, i) hops towards r-1, 4 steps. Rank r receives
  // Q[r+1..r+3] that exist and one partial O, LSE from each of r-1..r-3 that exist. FLOPs:
  // rank r computes KV[r] against every query that sees it: key k is seen by min(W, S - k).
  const int p = 8;
  const std::int64_t seq = 8192, w = 2500, c = seq / p;
  const AttentionShape fwd = window_shape(seq, w, PassSelection::forward);
  const ChunkBytes b = chunk_bytes(fwd, p);
  const Plan plan = plan_of("pass_q", fwd, p);
  const PlanReport report = validate_plan(plan);
  INFO(errors_of(report));
  REQUIRE(report.ok());
  const double per_pair = 4.0 * 32 * 128;
  for (int r = 0; r < p; ++r) {
    INFO("rank " << r);
    const RankStats& st = report.ranks[static_cast<std::size_t>(r)];
    CHECK(st.bytes_received ==
          Approx(std::min(3, p - 1 - r) * b.q + std::min(3, r) * (b.o + b.lse)));
    double pairs = 0;
    for (std::int64_t k = r * c; k < (r + 1) * c; ++k)
      pairs += static_cast<double>(std::min(w, seq - k));
    CHECK(st.compute_flops == Approx(per_pair * pairs));
  }
}

TEST_CASE("masks: pass-Q, double ring and USP under documents of c tokens: bytes and FLOPs") {
  // P = 8 documents of c = S/P = 1024 tokens over zigzag blocks of h = 512: a document covers
  // blocks 2j, 2j+1, so odd block 2j+1 reads all of block 2j and chunks 2j, 2j+1 (ranks
  // 2j, 2j+1) are partners: rank r's two blocks (one even, one odd) hold h(h+1)/2 +
  // h(h+1)/2 + h^2 = c(c+1)/2 pairs, its Q row and its KV column alike. Pass-Q and the double
  // ring take contiguous chunks under documents: they are the documents, nothing moves. USP u = 2:
  // each group holds a pair of partners, so its ring moves nothing: only the all-to-all's (u-1)/u
  // (q + kv + of).
  const int p = 8;
  AttentionShape s = shape_with(true, true, PassSelection::forward, 8192);
  s.set_mask(documents_mask(std::vector<std::int64_t>(8, 1024)));
  const ChunkBytes b = chunk_bytes(s, p);
  const double c = 1024.0, per_pair = 4.0 * 32 * 128;
  const PlanReport pq = validate_plan(plan_of("pass_q", s, p));
  const PlanReport dr = validate_plan(plan_of("double_ring", s, p));
  const PlanReport usp = validate_plan(plan_of("usp", s, p, 2));
  INFO(errors_of(pq) << errors_of(dr) << errors_of(usp));
  REQUIRE(pq.ok());
  REQUIRE(dr.ok());
  REQUIRE(usp.ok());
  for (int r = 0; r < p; ++r) {
    INFO("rank " << r);
    const auto i = static_cast<std::size_t>(r);
    CHECK(pq.ranks[i].bytes_received == 0.0);
    CHECK(dr.ranks[i].bytes_received == 0.0);
    CHECK(usp.ranks[i].bytes_received == Approx(0.5 * (b.q + b.kv + b.of)));
    for (const PlanReport* rep : {&pq, &dr, &usp}) {
      CHECK(rep->ranks[i].compute_flops == Approx(per_pair * c * (c + 1) / 2));
    }
  }
}

namespace {

// Bytes received per rank by the double ring (P = n k, contiguous chunks) under a mask,
// counted from token visibility: chunk x = M k + j travels its spine (M, j) -> (M+1, j) ->
// ... up to the last node with a reader of x, and at each node M+o of the spine its branch
// (M+o, j) -> (M+o, j+1) -> ... up to that node's farthest reader along the inner ring; each
// hop's receiver gets kv. Backward each hop's receiver also gets the dKV that follows, a
// branch's last holder sends it back to the spine rank (dkv there when the branch has hops),
// and the spine's last node sends it home (dkv at the owner when the spine has hops).
struct DoubleRingBytes {
  std::vector<double> fwd, bwd;
};

DoubleRingBytes double_ring_hop_bytes(const AttentionShape& s, int p, int k) {
  const int n = p / k;
  const std::int64_t c = s.seq_len / p;
  const ChunkBytes bytes = chunk_bytes(s, p);
  const auto reads = [&](int rank, int x) {
    for (std::int64_t i = rank * c; i < (rank + 1) * c; ++i) {
      for (std::int64_t j = x * c; j < (x + 1) * c; ++j) {
        if (s.mask.visible(i, j)) return true;
      }
    }
    return false;
  };
  DoubleRingBytes out{std::vector<double>(static_cast<std::size_t>(p), 0.0),
                      std::vector<double>(static_cast<std::size_t>(p), 0.0)};
  const auto hop = [&](int rank) {
    out.fwd[static_cast<std::size_t>(rank)] += bytes.kv;
    out.bwd[static_cast<std::size_t>(rank)] += bytes.kv + bytes.dkv;
  };
  for (int x = 0; x < p; ++x) {
    const int m = x / k, j = x % k;
    std::vector<int> branch(static_cast<std::size_t>(n), 0);
    int spine = 0;
    for (int o = 0; o < n; ++o) {
      for (int t = 0; t < k; ++t) {
        if (!reads(((m + o) % n) * k + (j + t) % k, x)) continue;
        spine = o;
        branch[static_cast<std::size_t>(o)] = t;
      }
    }
    for (int o = 0; o <= spine; ++o) {
      const int node = (m + o) % n;
      if (o > 0) hop(node * k + j);
      for (int t = 1; t <= branch[static_cast<std::size_t>(o)]; ++t) hop(node * k + (j + t) % k);
      if (branch[static_cast<std::size_t>(o)] > 0) {
        out.bwd[static_cast<std::size_t>(node * k + j)] += bytes.dkv;
      }
    }
    if (spine > 0) out.bwd[static_cast<std::size_t>(x)] += bytes.dkv;
  }
  return out;
}

}  // namespace

TEST_CASE("masks: double ring under windows and documents stops KV after its farthest reader") {
  // P = 16 = 4 nodes of k = 4, S = 16K (c = 1K). Closed form for W <= c (rank p = N k + i
  // reads chunk p-1 only): chunk N k + i - 1 comes one inner hop (i >= 1); chunk N k - 1 of
  // the previous node comes by the outer hop to (N, k-1), which relays it one inner hop to
  // (N, 0): forward [p >= 1] kv + [i = k-1, N >= 1] kv. Backward the same KV, a dkv with each
  // hop, the own chunk's dkv back from its inner reader (i < k-1) and the relayed chunk's back
  // to (N, k-1) from (N, 0) (N >= 1), and rank (N, k-1)'s own dkv home from the next node
  // (N <= n-2): (KV in) (kv + dkv) + ([i < k-1] + [i = k-1, N >= 1] + [i = k-1, N <= n-2]) dkv.
  // Wider windows and documents: double_ring_hop_bytes recounts the rule from token visibility.
  const int p = 16, k = 4, n = 4;
  const AttentionShape w500 = window_shape(16 * 1024, 500, PassSelection::both);
  const ChunkBytes b = chunk_bytes(w500, p);
  AttentionShape fwd = w500, bwd = w500;
  fwd.pass = PassSelection::forward;
  bwd.pass = PassSelection::backward;
  const PlanReport f = validate_plan(plan_of("double_ring", fwd, p, 0, k));
  const PlanReport g = validate_plan(plan_of("double_ring", bwd, p, 0, k));
  INFO(errors_of(f) << errors_of(g));
  REQUIRE(f.ok());
  REQUIRE(g.ok());
  const double per_pair = 4.0 * 32 * 128, c = 1024.0, w = 500.0;
  for (int r = 0; r < p; ++r) {
    const int node = r / k, i = r % k;
    INFO("rank " << r);
    const int kv_in = (r >= 1) + (i == k - 1 && node >= 1);
    const int home = (i < k - 1) + (i == k - 1 && node >= 1) + (i == k - 1 && node <= n - 2);
    const auto at = static_cast<std::size_t>(r);
    CHECK(f.ranks[at].bytes_received == Approx(kv_in * b.kv));
    CHECK(g.ranks[at].bytes_received == Approx(kv_in * (b.kv + b.dkv) + home * b.dkv));
    CHECK(f.ranks[at].compute_flops == Approx(per_pair * (c * w - (r == 0 ? w * (w - 1) / 2 : 0))));
  }
  std::vector<AttentionShape> shapes;
  for (std::int64_t win : {31, 93, 312}) {  // c = 64: one, two and five chunks back
    shapes.push_back(window_shape(16 * 64, win, PassSelection::both));
  }
  AttentionShape docs = shape_with(true, true, PassSelection::both, 16 * 64);
  docs.set_mask(documents_mask({100, 60, 300, 8, 300, 256}));
  shapes.push_back(docs);
  for (const AttentionShape& s : shapes) {
    INFO("mask " << to_string(s.mask.kind) << " W " << s.mask.window_tokens);
    const DoubleRingBytes want = double_ring_hop_bytes(s, p, k);
    AttentionShape sf = s, sb = s;
    sf.pass = PassSelection::forward;
    sb.pass = PassSelection::backward;
    const PlanReport rf = validate_plan(plan_of("double_ring", sf, p, 0, k));
    const PlanReport rb = validate_plan(plan_of("double_ring", sb, p, 0, k));
    const PlanReport both = validate_plan(plan_of("double_ring", s, p, 0, k));
    INFO(errors_of(rf) << errors_of(rb) << errors_of(both));
    REQUIRE(rf.ok());
    REQUIRE(rb.ok());
    REQUIRE(both.ok());
    for (int r = 0; r < p; ++r) {
      INFO("rank " << r);
      const auto at = static_cast<std::size_t>(r);
      CHECK(rf.ranks[at].bytes_received == Approx(want.fwd[at]));
      CHECK(rb.ranks[at].bytes_received == Approx(want.bwd[at]));
    }
  }
}

TEST_CASE("masks: FLOPs per rank of every schedule under documents of c tokens and a window") {
  // Documents of c = S/P tokens (P of them), causal inside each: a contiguous chunk is one
  // document (c(c+1)/2 pairs); a zigzag chunk holds one even and one odd block of h = c/2,
  // and a document (blocks 2j, 2j+1) gives its odd block h(h+1)/2 + h^2 pairs and its even
  // block h(h+1)/2, so every rank's row (and column) is again c(c+1)/2. Ulysses and USP
  // compute total/P. Mesh a x b (a even): the tile holds the diagonal pair and exactly one
  // partner pair (Q chunk g^1 against KV chunk g, h^2 pairs): c(c+1)/2 again. Striped: rank r's
  // queries at j c + r + b P (b < c/P) see r + bP + 1 keys of their document:
  // P ((c/P)(r+1) + P (c/P)(c/P-1)/2) = c (r+1) + c (c-P)/2.
  // Window W <= S/2P over zigzag chunks (all-gather KV, Ulysses): a row has c W pairs but rank
  // 0's (c W - W(W-1)/2); Ulysses computes (S W - W(W-1)/2) / P. Forward 4 b H d per pair.
  const int p = 8;
  const double c = 1024.0, per_pair = 4.0 * 32 * 128;
  AttentionShape docs = shape_with(true, true, PassSelection::forward, 8192);
  docs.set_mask(documents_mask(std::vector<std::int64_t>(8, 1024)));
  for (const char* kind : {"ring", "zigzag", "allgather_kv", "ulysses", "usp", "mesh"}) {
    INFO(kind);
    ScheduleSpec spec;
    spec.kind = kind;
    spec.gpus = p;
    if (std::string(kind) == "usp") spec.ulysses_degree = 2;
    if (std::string(kind) == "mesh") {
      spec.tile_a = 2;
      spec.tile_b = 4;
    }
    const PlanReport report = validate_plan(make_plan(docs, spec));
    INFO(errors_of(report));
    REQUIRE(report.ok());
    for (const RankStats& r : report.ranks) {
      CHECK(r.compute_flops == Approx(per_pair * c * (c + 1) / 2));
    }
    // Bytes: all-gather KV fetches the partner's chunk only (kv); mesh 2x4 sends each Q
    // chunk to the other member of its Q group, whose KV chunk is the partner, and gets one
    // partial back, and no KV chunk leaves its member (the partner's Q chunk is in the same
    // Q group): q + o + lse.
    const ChunkBytes b = chunk_bytes(docs, p);
    for (const RankStats& r : report.ranks) {
      if (std::string(kind) == "allgather_kv") CHECK(r.bytes_received == Approx(b.kv));
      if (std::string(kind) == "mesh") CHECK(r.bytes_received == Approx(b.q + b.o + b.lse));
    }
  }
  const PlanReport striped = validate_plan(plan_of("striped", docs, p));
  REQUIRE(striped.ok());
  const ChunkBytes sb = chunk_bytes(docs, p);
  for (int r = 0; r < p; ++r) {
    INFO("striped rank " << r);
    const RankStats& st = striped.ranks[static_cast<std::size_t>(r)];
    CHECK(st.compute_flops == Approx(per_pair * (c * (r + 1) + c * (c - p) / 2)));
    // Every striped chunk holds keys of every document: the ring runs all P steps.
    CHECK(st.bytes_received == Approx((p - 1) * sb.kv));
  }
  // Window W = 300 <= h = 512 over S = 8K.
  const AttentionShape win = window_shape(8192, 300, PassSelection::forward);
  const double w = 300.0, edge = w * (w - 1) / 2;
  const PlanReport ag = validate_plan(plan_of("allgather_kv", win, p));
  const PlanReport ul = validate_plan(plan_of("ulysses", win, p));
  INFO(errors_of(ag) << errors_of(ul));
  REQUIRE(ag.ok());
  REQUIRE(ul.ok());
  const ChunkBytes b = chunk_bytes(win, p);
  for (int r = 0; r < p; ++r) {
    INFO("rank " << r);
    const auto i = static_cast<std::size_t>(r);
    CHECK(ag.ranks[i].compute_flops == Approx(per_pair * (c * w - (r == 0 ? edge : 0.0))));
    CHECK(ul.ranks[i].compute_flops == Approx(per_pair * (8192.0 * w - edge) / p));
    // Ulysses' all-to-alls move the same bytes under every mask: (P-1)/P (q + kv + of).
    CHECK(ul.ranks[i].bytes_received == Approx((p - 1.0) / p * (b.q + b.kv + b.of)));
  }
}

TEST_CASE("masks: documents aligned with the ring chunks need no KV at all") {
  // Documents of exactly c = S/P tokens: no pair crosses a chunk, the ring has one step and
  // every rank computes one causal block of c(c+1)/2 pairs.
  const int p = 4;
  AttentionShape s = shape_with(true, true, PassSelection::forward, 4096);
  s.set_mask(documents_mask({1024, 1024, 1024, 1024}));
  const PlanReport report = validate_plan(plan_of("ring", s, p));
  INFO(errors_of(report));
  REQUIRE(report.ok());
  const double per_pair = 4.0 * 32 * 128, c = 1024;
  for (const RankStats& r : report.ranks) {
    CHECK(r.bytes_received == 0);
    CHECK(r.compute_flops == Approx(per_pair * c * (c + 1) / 2));
  }
}

TEST_CASE("masks: work balance of a packed 1M-token batch on 64 ranks (shipped distribution)") {
  const std::vector<LengthBin> bins =
      read_length_distribution(TILESIM_SOURCE_DIR "/scenarios/document-lengths-pile.csv");
  AttentionShape s = shape_with(true, true, PassSelection::forward, 1 << 20);
  const std::vector<std::int64_t> lengths = sample_packed_lengths(bins, 1 << 20, 1);
  s.set_mask(documents_mask(lengths));
  const double zigzag = compute_balance(validate_plan(plan_of("zigzag", s, 64)));
  ScheduleSpec spec;
  spec.kind = "ring";
  spec.gpus = 64;
  spec.balance = TokenBalance::work;
  const PlanReport balanced = validate_plan(make_plan(s, spec));
  INFO(errors_of(balanced));
  REQUIRE(balanced.ok());
  const double work = compute_balance(balanced);
  INFO("zigzag " << zigzag << " work " << work << " documents " << lengths.size());
  CHECK(work <= 1.05);
  CHECK(work < zigzag);
  // The validator's FLOPs agree with the assignment's own work sums.
  // Both sum the same integer pair counts in double, in different orders: 1e-9 relative is
  // far above that rounding and far below any difference of one block.
  CHECK(work == Approx(balanced_assignment(s, 64).max_over_mean).epsilon(1e-9));
}

TEST_CASE("masks: LPT assignment on a hand-checked case") {
  // Causal mask, S = 8, 2 ranks, k = 2 blocks of 2 tokens: row works of blocks 0..3 are
  // 3, 7, 11, 15 (block b: 2*2b + 3). LPT: 15 -> r0, 11 -> r1, 7 -> r1 (18), 3 -> r0 (18).
  AttentionShape s = shape_with(false, true, PassSelection::forward, 8);
  const WorkAssignment a = assign_blocks_by_work(s, 2, 2);
  CHECK(a.rank_blocks[0] == std::vector<int>{0, 3});
  CHECK(a.rank_blocks[1] == std::vector<int>{1, 2});
  CHECK(a.max_over_mean == 1.0);
}

TEST_CASE("masks: document sampling is deterministic, fills seq_len and truncates the last") {
  // splitmix64's published first outputs for seed 1234567 (Vigna, splitmix64.c test vector).
  SplitMix64 rng(1234567);
  CHECK(rng.next() == 6457827717110365317ULL);
  CHECK(rng.next() == 3203168211198807973ULL);
  CHECK(rng.next() == 9817491932198370423ULL);
  const std::vector<LengthBin> bins = {{10, 10, 1.0}, {100, 100, 0.0}};
  const std::vector<std::int64_t> lengths = sample_packed_lengths(bins, 95, 3);
  CHECK(lengths == std::vector<std::int64_t>{10, 10, 10, 10, 10, 10, 10, 10, 10, 5});
  const std::vector<LengthBin> two = {{1, 50, 1.0}, {60, 70, 1.0}};
  const auto a = sample_packed_lengths(two, 10000, 42);
  CHECK(a == sample_packed_lengths(two, 10000, 42));
  CHECK(a != sample_packed_lengths(two, 10000, 43));
  std::int64_t sum = 0;
  for (std::int64_t len : a) sum += len;
  CHECK(sum == 10000);
}

namespace {

Plan mesh_plan(const AttentionShape& shape, int a, int b) {
  ScheduleSpec spec;
  spec.kind = "mesh";
  spec.gpus = a * b;
  spec.tile_a = a;
  spec.tile_b = b;
  return make_plan(shape, spec);
}

// Whether zigzag chunks qc and kc (blocks r and 2P-1-r of S/2P tokens) share an unmasked
// pair, by brute force over token positions: independent of the mask's closed forms.
bool chunks_touch(const AttentionMask& mask, std::int64_t seq_len, int p, int qc, int kc) {
  const std::int64_t len = seq_len / (2 * p);
  auto positions = [&](int chunk) {
    std::vector<std::int64_t> out;
    for (int blk : {chunk, 2 * p - 1 - chunk}) {
      for (std::int64_t i = 0; i < len; ++i) out.push_back(blk * len + i);
    }
    return out;
  };
  for (std::int64_t i : positions(qc)) {
    for (std::int64_t j : positions(kc)) {
      if (mask.visible(i, j)) return true;
    }
  }
  return false;
}

// Bytes received per rank by a mesh a x b that moves only what the mask needs, counted from
// the rule in docs/schedules.md "Masks": every chunk goes straight from its owner to each
// member of its ring with work on it, and every partial straight from each such member back
// to the owner.
struct MeshHopBytes {
  std::vector<double> fwd, bwd;
};

MeshHopBytes mesh_hop_bytes(const AttentionShape& s, int a, int b) {
  const int p = a * b;
  const ChunkBytes c = chunk_bytes(s, p);
  MeshHopBytes out{std::vector<double>(static_cast<std::size_t>(p), 0.0),
                   std::vector<double>(static_cast<std::size_t>(p), 0.0)};
  // One ring of n members: member(pos) is its rank, work(pos, item) whether it needs item.
  auto ring = [&](int n, auto member, auto work, double gather_fwd, double reduce_fwd,
                  double gather_bwd, double reduce_bwd) {
    for (int x = 0; x < n; ++x) {
      for (int y = 0; y < n; ++y) {
        if (y == x || !work(y, x)) continue;
        out.fwd[static_cast<std::size_t>(member(y))] += gather_fwd;
        out.bwd[static_cast<std::size_t>(member(y))] += gather_bwd;
        out.fwd[static_cast<std::size_t>(member(x))] += reduce_fwd;
        out.bwd[static_cast<std::size_t>(member(x))] += reduce_bwd;
      }
    }
  };
  const AttentionMask& m = s.mask;
  for (int tr = 0; tr < b; ++tr) {  // Q rings: ranks tr*a + y hold Q chunks tr*a + x
    ring(
        a, [&](int y) { return tr * a + y; },
        [&](int y, int x) {
          for (int k = 0; k < b; ++k) {
            if (chunks_touch(m, s.seq_len, p, tr * a + x, y + a * k)) return true;
          }
          return false;
        },
        c.q, c.o + c.lse, c.q + c.q + c.o + c.lse, c.o);
  }
  for (int tc = 0; tc < a; ++tc) {  // KV rings: ranks z*a + tc hold KV chunks tc + a*x
    ring(
        b, [&](int z) { return z * a + tc; },
        [&](int z, int x) {
          for (int j = 0; j < a; ++j) {
            if (chunks_touch(m, s.seq_len, p, z * a + j, tc + a * x)) return true;
          }
          return false;
        },
        c.kv, 0.0, c.kv, c.dkv);
  }
  return out;
}

}  // namespace

TEST_CASE("masks: mesh 2x2 under a window moves only the chunks and partials with work") {
  // S = 1024, P = 4: zigzag blocks of 128 tokens, chunk r = blocks {r, 7-r}. W = 100 < 128,
  // so a query block sees only itself and the block before it: chunk pairs (i, j) have work
  // iff |i - j| <= 1 (block r sees r-1, chunk r-1; block 7-r sees 6-r, chunk r+1).
  // Rank g = tr*2 + tc holds Q chunks {2tr, 2tr+1} x KV chunks {tc, tc+2}:
  //   g0 Q{0,1} KV{0,2}: (1,2) needs KV 2 from g2; g2 Q{2,3} KV{0,2} has no work on KV 0.
  //   g1 Q{0,1} KV{1,3}: no work on KV 3; g3 Q{2,3} KV{1,3} needs KV 1 ((2,1)).
  //   Both Q rings need every Q chunk: (1,0), (0,1) on tr = 0; (3,2), (2,1) on tr = 1.
  // Forward received: every rank q + (o + lse) on its Q ring; KV: g0 and g3 one kv.
  // Backward: every rank Q, dO, O, LSE and one dQ; KV as forward; dKV partials: g0's of KV 2
  // goes home to g2, g3's of KV 1 to g1; g2 and g1 have none to send.
  AttentionShape fwd = shape_with(true, true, PassSelection::forward, 1024);
  AttentionMask w;
  w.kind = AttentionMaskKind::sliding_window;
  w.window_tokens = 100;
  fwd.set_mask(w);
  const ChunkBytes c = chunk_bytes(fwd, 4);
  const PlanReport f = validate_plan(mesh_plan(fwd, 2, 2));
  INFO(errors_of(f));
  REQUIRE(f.ok());
  const double q_ring = c.q + c.o + c.lse;
  const double want_fwd[] = {q_ring + c.kv, q_ring, q_ring, q_ring + c.kv};
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    CHECK(f.ranks[static_cast<std::size_t>(r)].bytes_received == Approx(want_fwd[r]));
  }
  AttentionShape bwd = fwd;
  bwd.pass = PassSelection::backward;
  const PlanReport g = validate_plan(mesh_plan(bwd, 2, 2));
  INFO(errors_of(g));
  REQUIRE(g.ok());
  const double q_side = 2 * c.q + 2 * c.o + c.lse;  // Q, dO, O (fp32), dQ partial, LSE
  const double want_bwd[] = {q_side + c.kv, q_side + c.dkv, q_side + c.dkv, q_side + c.kv};
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    CHECK(g.ranks[static_cast<std::size_t>(r)].bytes_received == Approx(want_bwd[r]));
  }
}

namespace {

// Mesh a x b (a >= 2, b >= 2) under a window W <= h = S/2P over zigzag chunks: chunks i and j
// share pairs iff |i - j| <= 1, so Q chunk q is read by the Q-ring members holding KV chunks
// q-1 (if q >= 1) and q+1 (if q <= P-2), and KV chunk v by the KV-ring members holding Q
// chunks v-1 and v+1 (only the KV rings tc = 0 and tc = a-1 leave their member). Counted per
// rank g = tr*a + tc, by hand from the tile of mesh_tile.hpp:
//   Q chunks in      [g != a-1] + [g != P-a]      (a >= 3; 1 when a = 2)
//   partials home    [g >= 1] + [g <= P-2]        (a >= 3; 1 when a = 2)
//   KV chunks in     [tc = 0, tr <= b-2] + [tc = a-1, tr >= 1]
//   dKV home         [tc = 0, tr >= 1] + [tc = a-1, tr <= b-2]
struct MeshNeighbourCounts {
  int q_in, partials, kv_in, dkv_home;
};

MeshNeighbourCounts mesh_neighbour_counts(int g, int a, int b) {
  const int p = a * b, tr = g / a, tc = g % a;
  MeshNeighbourCounts n{};
  n.q_in = a == 2 ? 1 : (g != a - 1) + (g != p - a);
  n.partials = a == 2 ? 1 : (g >= 1) + (g <= p - 2);
  n.kv_in = (tc == 0 && tr <= b - 2) + (tc == a - 1 && tr >= 1);
  n.dkv_home = (tc == 0 && tr >= 1) + (tc == a - 1 && tr <= b - 2);
  return n;
}

}  // namespace

TEST_CASE("masks: mesh under a narrow window sends each chunk and partial to its readers only") {
  // Closed forms above; forward q / (o + lse) / kv per count, backward Q side (q + dO + O +
  // LSE) per Q chunk in, dq per partial home, kv per KV chunk in, dkv per dKV home.
  // FLOPs: a rank's tile holds its diagonal pair (two diagonal blocks of h W - W(W-1)/2 pairs;
  // rank P-1's also holds its high block's view of its low one, W(W-1)/2) and the pairs
  // (q, q-1), (q, q+1) of W(W-1)/2 each that fall in it: [g != a-1] + [g != P-a] of them.
  // Forward 4 b H d per pair, backward 10 b H d (dv = d).
  struct Case {
    int a, b;
    std::int64_t seq, window;
  };
  for (const Case& cs : {Case{4, 4, 64 * 16, 20}, Case{3, 2, 64 * 6, 32}, Case{2, 4, 64 * 8, 7},
                         Case{4, 2, 64 * 8, 32}}) {
    const int a = cs.a, b = cs.b, p = a * b;
    INFO("tile " << a << "x" << b << " W " << cs.window);
    for (PassSelection pass : {PassSelection::forward, PassSelection::backward}) {
      const AttentionShape s = window_shape(cs.seq, cs.window, pass);
      const ChunkBytes c = chunk_bytes(s, p);
      const PlanReport report = validate_plan(mesh_plan(s, a, b));
      INFO(errors_of(report));
      REQUIRE(report.ok());
      const double h = static_cast<double>(cs.seq) / (2 * p), w = static_cast<double>(cs.window);
      const double per_pair = (pass == PassSelection::forward ? 4.0 : 10.0) * 32 * 128;
      for (int g = 0; g < p; ++g) {
        INFO("rank " << g << (pass == PassSelection::forward ? " forward" : " backward"));
        const MeshNeighbourCounts n = mesh_neighbour_counts(g, a, b);
        const double bytes = pass == PassSelection::forward
                                 ? n.q_in * c.q + n.partials * (c.o + c.lse) + n.kv_in * c.kv
                                 : n.q_in * (2 * c.q + c.o + c.lse) + n.partials * c.o +
                                       n.kv_in * c.kv + n.dkv_home * c.dkv;
        const RankStats& st = report.ranks[static_cast<std::size_t>(g)];
        CHECK(st.bytes_received == Approx(bytes));
        CHECK(st.bytes_sent > 0);
        const double cross = (g != a - 1) + (g != p - a) + (g == p - 1);
        CHECK(st.compute_flops ==
              Approx(per_pair * (2 * h * w - w * (w - 1) + cross * w * (w - 1) / 2)));
      }
    }
  }
}

TEST_CASE("masks: tile min-bytes counts what the direct sends move under a window") {
  // P = 16, GQA (kv = q/2, o = 2q, lse = q/64), W <= S/2P, forward, busiest rank by the
  // closed forms above: 1x16 2 kv = q; 2x8 q + (o + lse) + kv = 3.52q; 4x4 and 8x2
  // 2q + 2(o + lse) + kv = 6.53q; 16x1 2q + 2(o + lse) = 6.03q. So 1x16, where the full-work
  // closed forms, (a-1) q + (b-1) kv + (a-1)(o + lse), pick 2x8 (6.52q against 1x16's 7.5q).
  const AttentionShape s = window_shape(64 * 32, 20, PassSelection::forward);
  const MeshTile t = fewest_bytes_tile(s, 16);
  CHECK(t.a == 1);
  CHECK(t.b == 16);
  AttentionShape causal = shape_with(true, true, PassSelection::forward, 64 * 32);
  const MeshTile u = fewest_bytes_tile(causal, 16);
  CHECK(u.a == 2);
  CHECK(u.b == 8);
}

TEST_CASE("masks: mesh 8x8 under W = 4K at 1M tokens: the busiest rank's bytes") {
  // c = 16K tokens, h = 8K >= W. GQA 32 x 128, 8 KV heads, bf16: q = 128 MiB, kv = 64 MiB,
  // o = 256 MiB (fp32), lse = 2 MiB. Busiest forward rank (2 Q chunks, 2 partials, 1 KV):
  // 2 q + 2 (o + lse) + kv = 836 MiB, against 7 (q + kv + o + lse) = 3150 MiB when the
  // chunks went round the one-way rings.
  const AttentionShape s = window_shape(1 << 20, 4096, PassSelection::forward);
  const PlanReport report = validate_plan(mesh_plan(s, 8, 8));
  INFO(errors_of(report));
  REQUIRE(report.ok());
  const double mib = 1024.0 * 1024.0;
  double busiest = 0.0;
  for (int g = 0; g < 64; ++g) {
    const MeshNeighbourCounts n = mesh_neighbour_counts(g, 8, 8);
    const double want = n.q_in * 128 * mib + n.partials * 258 * mib + n.kv_in * 64 * mib;
    CHECK(report.ranks[static_cast<std::size_t>(g)].bytes_received == want);
    busiest = std::max(busiest, report.ranks[static_cast<std::size_t>(g)].bytes_received);
  }
  CHECK(busiest == 836 * mib);
}

TEST_CASE("masks: mesh under windows and documents on several tiles matches the hop rule") {
  // Validator (coverage, matching, progress, outputs) on every mask, tile and pass; bytes per
  // rank against mesh_hop_bytes, which recounts the rule from token-level visibility.
  struct Case {
    int a, b;
  };
  const Case tiles[] = {{2, 2}, {2, 4}, {4, 2}, {4, 4}, {1, 4}, {4, 1}};
  for (const Case& t : tiles) {
    const int p = t.a * t.b;
    const std::int64_t seq = 64 * p;  // blocks of 32 tokens
    std::vector<AttentionMask> masks;
    for (std::int64_t win : {20, 40, 100}) {
      AttentionMask m;
      m.kind = AttentionMaskKind::sliding_window;
      m.window_tokens = win;
      masks.push_back(m);
    }
    masks.push_back(documents_mask({seq / 4, seq / 2 - 10, seq / 4 + 10}));
    masks.push_back(documents_mask({10, 30, 20, 36, seq - 96}));
    for (const AttentionMask& m : masks) {
      AttentionShape s = shape_with(true, true, PassSelection::both, seq);
      s.set_mask(m);
      INFO("tile " << t.a << "x" << t.b << " mask " << to_string(m.kind) << " W "
                   << m.window_tokens);
      const MeshHopBytes want = mesh_hop_bytes(s, t.a, t.b);
      const PlanReport report = validate_plan(mesh_plan(s, t.a, t.b));
      INFO(errors_of(report));
      REQUIRE(report.ok());
      for (int r = 0; r < p; ++r) {
        INFO("rank " << r);
        CHECK(
            report.ranks[static_cast<std::size_t>(r)].bytes_received ==
            Approx(want.fwd[static_cast<std::size_t>(r)] + want.bwd[static_cast<std::size_t>(r)]));
      }
    }
  }
}

TEST_CASE("masks: mesh under a window with memory windows of two chunks stays valid") {
  // The receive window frees the chunk received `window` steps earlier; under a mask that
  // chunk may never have come (it holds no memory), and the plan must still prove correct.
  // (The greedy order needs one ring unwindowed when both are windowed below their size.)
  struct Case {
    MeshTile tile;
    MeshWindows windows;
  };
  for (const Case& cs :
       {Case{{2, 4}, {0, 2}}, Case{{4, 2}, {2, 0}}, Case{{4, 4}, {2, 0}}, Case{{4, 4}, {0, 2}}}) {
    const MeshTile t = cs.tile;
    AttentionShape s = shape_with(true, true, PassSelection::both, 64 * t.ranks());
    AttentionMask w;
    w.kind = AttentionMaskKind::sliding_window;
    w.window_tokens = 20;
    s.set_mask(w);
    MeshOptions opt;
    opt.tile = t;
    opt.windows = cs.windows;
    INFO("tile " << t.a << "x" << t.b << " windows " << cs.windows.q << "/" << cs.windows.kv);
    const PlanReport report = validate_plan(make_mesh_plan(s, opt));
    INFO(errors_of(report));
    CHECK(report.ok());
    // The forward's peak stays within mesh_memory.hpp's bound, direct sends or not.
    AttentionShape fwd = s;
    fwd.pass = PassSelection::forward;
    const PlanReport f = validate_plan(make_mesh_plan(fwd, opt));
    REQUIRE(f.ok());
    CHECK(f.max_peak_bytes() <= mesh_peak_bound_bytes(fwd, t, cs.windows));
  }
}
