#include "sim/schedules/mesh_relay.hpp"

#include <utility>

namespace tilesim {
namespace {

int mod(int x, int m) { return ((x % m) + m) % m; }

}  // namespace

MeshRelay::MeshRelay(int n, std::vector<std::uint8_t> needs) : n_(n), needs_(std::move(needs)) {
  gather_hops_.assign(static_cast<std::size_t>(n_), n_ - 1);
  if (needs_.empty()) return;
  for (int x = 0; x < n_; ++x) {
    int hops = 0;
    for (int d = 1; d < n_; ++d) {
      if (this->needs(mod(x + d, n_), x)) hops = d;
    }
    gather_hops_[static_cast<std::size_t>(x)] = hops;
  }
}

bool MeshRelay::needs(int y, int x) const {
  return needs_.empty() || needs_[static_cast<std::size_t>(y * n_ + x)] != 0;
}

bool MeshRelay::gather_hop(int x, int h) const {
  return h <= gather_hops_[static_cast<std::size_t>(x)];
}

bool MeshRelay::reduce_hop(int u, int y) const { return reduce_carrier(u, y) >= 0; }

int MeshRelay::reduce_carrier(int u, int y) const {
  int carrier = -1;
  for (int z = mod(u + 1, n_);; z = mod(z + 1, n_)) {
    if (needs(z, u)) carrier = z;
    if (z == y) return carrier;
  }
}

}  // namespace tilesim
