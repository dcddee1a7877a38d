// Mesh-Attention tile geometry (docs/schedules.md "Mesh-Attention").
//
// P = a*b positions; Q and KV are cut into P chunks and position g owns chunk g.
// Position g = tr*a + tc (tr = g / a, tc = g % a) computes the tile
//   Q chunks {tr*a + j : j < a}  x  KV chunks {tc + a*k : k < b},
// so every (q, kv) chunk pair belongs to exactly one rank and the tile holds
// (g, g). The Q-group of g is the a ranks with the same tr (they own the
// tile's Q chunks, position in the group = tc); the KV-group is the b ranks
// with the same tc (they own the tile's KV chunks, position = tr). Each group
// is a logical ring in position order: next = position + 1 mod size. The functions below
// name positions ("rank" in their names); a plan numbers its ranks by position or column by
// column (column_rank), as mesh_placement.hpp's rule says.
#pragma once

#include <utility>
#include <vector>

namespace tilesim {

struct MeshTile {
  int a = 1;  // Q-group size (Q chunks per tile)
  int b = 1;  // KV-group size (KV chunks per tile)

  int ranks() const { return a * b; }
  int q_pos(int rank) const { return rank % a; }   // tc
  int kv_pos(int rank) const { return rank / a; }  // tr
  // The tile's j-th Q chunk and k-th KV chunk (also the owning rank).
  int q_chunk(int rank, int j) const { return kv_pos(rank) * a + j; }
  int kv_chunk(int rank, int k) const { return q_pos(rank) + a * k; }
  int q_next(int rank) const { return kv_pos(rank) * a + (q_pos(rank) + 1) % a; }
  int q_prev(int rank) const { return kv_pos(rank) * a + (q_pos(rank) + a - 1) % a; }
  int kv_next(int rank) const { return ((kv_pos(rank) + 1) % b) * a + q_pos(rank); }
  int kv_prev(int rank) const { return ((kv_pos(rank) + b - 1) % b) * a + q_pos(rank); }
  // Numbered column by column (a KV-group's b positions consecutive ranks): position g's rank
  // tc*b + tr, and the position of a rank.
  int column_rank(int position) const { return q_pos(position) * b + kv_pos(position); }
  int column_position(int rank) const { return (rank % b) * a + rank / b; }
  // The rank shift the programs are equivariant under: whole Q-groups (a) by position, whole
  // KV-groups (b: tc + 1 mod a) by column.
  int rank_shift(bool by_column) const { return by_column ? b : a; }
};

// Every (a, b) with a*b = ranks, a ascending (1 x P is ring, P x 1 pass-Q).
std::vector<MeshTile> mesh_tiles(int ranks);

}  // namespace tilesim
