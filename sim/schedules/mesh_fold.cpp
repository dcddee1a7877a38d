#include "sim/schedules/mesh_fold.hpp"

#include <algorithm>

namespace tilesim {
namespace {

std::size_t ix(int i) { return static_cast<std::size_t>(i); }

int fold_rank(MeshTile tile, MeshFold fold, int tr, int tc) {
  const int k = fold.classes();
  return tr % fold.x + fold.x * (tc % fold.y) +
         k * (tr / fold.x + (tile.b / fold.x) * (tc / fold.y));
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<int> mesh_fold_ranks(MeshTile tile, MeshFold fold) {
  std::vector<int> rank(ix(tile.ranks()));
  for (int g = 0; g < tile.ranks(); ++g) {
    rank[ix(g)] = fold_rank(tile, fold, tile.kv_pos(g), tile.q_pos(g));
  }
  return rank;
}

std::vector<std::vector<int>> mesh_fold_generators(MeshTile tile, MeshFold fold) {
  const std::vector<int> rho = mesh_fold_ranks(tile, fold);
  std::vector<std::vector<int>> generators;
  auto add = [&](int d_tr, int d_tc) {
    std::vector<int> image(ix(tile.ranks()));
    for (int g = 0; g < tile.ranks(); ++g) {
      const int tr = (tile.kv_pos(g) + d_tr) % tile.b;
      const int tc = (tile.q_pos(g) + d_tc) % tile.a;
      image[ix(rho[ix(g)])] = fold_rank(tile, fold, tr, tc);
    }
    generators.push_back(std::move(image));
  };
  if (fold.x < tile.b) add(fold.x, 0);
  if (fold.y < tile.a) add(0, fold.y);
  return generators;
}

std::vector<MeshFold> mesh_fold_candidates(MeshTile tile) {
  std::vector<MeshFold> folds;
  for (int x : divisors(tile.b)) {
    if (tile.b >= 2 && x < 2) continue;
    for (int y : divisors(tile.a)) {
      if (tile.a >= 2 && y < 2) continue;
      if (x * y < tile.ranks()) folds.push_back({x, y});
    }
  }
  std::stable_sort(folds.begin(), folds.end(), [](MeshFold l, MeshFold r) {
    return l.classes() != r.classes() ? l.classes() < r.classes() : l.x < r.x;
  });
  return folds;
}

}  // namespace tilesim
