#include "sim/schedules/mesh_relay.hpp"

#include <utility>

namespace tilesim {
namespace {

int mod(int x, int m) { return ((x % m) + m) % m; }

}  // namespace

MeshRelay::MeshRelay(int n, std::vector<std::uint8_t> needs, bool direct)
    : n_(n), needs_(std::move(needs)), direct_(direct) {
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

// 1, n-1, 2, n-2, ...: the n-1 nonzero shifts, nearest first, alternating sides.
int MeshRelay::offset(int s) const { return s % 2 == 0 ? s / 2 + 1 : n_ - (s + 1) / 2; }

int MeshRelay::arrival(int p, int s) const {
  return direct_ ? mod(p - offset(s), n_) : mod(p - 1 - s, n_);
}

MeshTransfer MeshRelay::gather_send(int p, int s) const {
  if (direct_) {
    const int to = mod(p + offset(s), n_);
    return needs(to, p) ? MeshTransfer{p, to, p} : MeshTransfer{};
  }
  const int x = mod(p - s, n_);
  return gather_hop(x, s + 1) ? MeshTransfer{x, mod(p + 1, n_), x} : MeshTransfer{};
}

MeshTransfer MeshRelay::gather_recv(int p, int s) const {
  const int x = arrival(p, s);
  if (direct_) return needs(p, x) ? MeshTransfer{x, x, x} : MeshTransfer{};
  return gather_hop(x, s + 1) ? MeshTransfer{x, mod(p - 1, n_), x} : MeshTransfer{};
}

MeshTransfer MeshRelay::reduce_send(int p, int s) const {
  const int u = arrival(p, s);
  if (direct_) return needs(p, u) ? MeshTransfer{u, u, p} : MeshTransfer{};
  return reduce_hop(u, p) ? MeshTransfer{u, mod(p + 1, n_), reduce_carrier(u, p)} : MeshTransfer{};
}

MeshTransfer MeshRelay::reduce_recv(int p, int s) const {
  if (direct_) {
    const int from = mod(p + offset(s), n_);
    return needs(from, p) ? MeshTransfer{p, from, from} : MeshTransfer{};
  }
  const int u = mod(p - 2 - s, n_), prev = mod(p - 1, n_);
  return reduce_hop(u, prev) ? MeshTransfer{u, prev, reduce_carrier(u, prev)} : MeshTransfer{};
}

int MeshRelay::forward_step(int p, int x) const {
  if (direct_ || x == p) return -1;
  const int s = mod(p - x, n_);  // gather step s sends item p-s
  return s < n_ - 1 && gather_hop(x, s + 1) ? s : -1;
}

bool MeshRelay::gather_hop(int x, int h) const {
  return h <= gather_hops_[static_cast<std::size_t>(x)];
}

bool MeshRelay::reduce_hop(int u, int y) const { return reduce_carrier(u, y) >= 0; }

int MeshRelay::reduce_carrier(int u, int y) const {
  if (needs_.empty()) return y;  // every member has work on u: the last one visited, y
  int carrier = -1;
  for (int z = mod(u + 1, n_);; z = mod(z + 1, n_)) {
    if (needs(z, u)) carrier = z;
    if (z == y) return carrier;
  }
}

}  // namespace tilesim
