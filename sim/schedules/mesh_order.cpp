#include "sim/schedules/mesh_order.hpp"

#include <stdexcept>

namespace tilesim {
namespace {

// Progress through the three rings.
struct Progress {
  int q = 0;
  int kv = 0;
  int r = 0;
};

bool step_allowed(int a, int b, const Progress& done, MeshStep step, MeshWindows w) {
  switch (step) {
    case MeshStep::q:
      return done.q < a - 1 && (w.q == 0 || done.q < w.q || done.kv == b - 1);
    case MeshStep::kv:
      return done.kv < b - 1 && (w.kv == 0 || done.kv < w.kv || done.q == a - 1);
    case MeshStep::reduce:
      return done.r < a - 1 && done.kv == b - 1 && done.q > done.r;
  }
  return false;
}

void advance(Progress& done, MeshStep step) {
  if (step == MeshStep::q) ++done.q;
  if (step == MeshStep::kv) ++done.kv;
  if (step == MeshStep::reduce) ++done.r;
}

void check_windows(MeshWindows w) {
  if (w.q == 1 || w.kv == 1 || w.q < 0 || w.kv < 0) {
    throw std::invalid_argument("mesh windows must be 0 (unlimited) or at least 2");
  }
}

void enumerate(int a, int b, MeshWindows w, Progress done, MeshOrder& prefix,
               std::vector<MeshOrder>& out) {
  const std::size_t total = static_cast<std::size_t>(2 * (a - 1) + (b - 1));
  if (prefix.size() == total) {
    out.push_back(prefix);
    return;
  }
  for (MeshStep step : {MeshStep::q, MeshStep::kv, MeshStep::reduce}) {
    if (!step_allowed(a, b, done, step, w)) continue;
    Progress next = done;
    advance(next, step);
    prefix.push_back(step);
    enumerate(a, b, w, next, prefix, out);
    prefix.pop_back();
  }
}

}  // namespace

bool mesh_order_allowed(int a, int b, const MeshOrder& order, MeshWindows windows) {
  check_windows(windows);
  Progress done;
  for (MeshStep step : order) {
    if (!step_allowed(a, b, done, step, windows)) return false;
    advance(done, step);
  }
  return done.q == a - 1 && done.kv == b - 1 && done.r == a - 1;
}

MeshOrder greedy_mesh_order(int a, int b, double q_bytes, double kv_bytes, MeshWindows windows) {
  check_windows(windows);
  MeshOrder order;
  Progress done;
  const std::size_t total = static_cast<std::size_t>(2 * (a - 1) + (b - 1));
  while (order.size() < total) {
    const double q_score = (1.0 + done.kv) / q_bytes;  // blocks unlocked per byte
    const double kv_score = (1.0 + done.q) / kv_bytes;
    const bool q_ok = step_allowed(a, b, done, MeshStep::q, windows);
    const bool kv_ok = step_allowed(a, b, done, MeshStep::kv, windows);
    const bool r_ok = step_allowed(a, b, done, MeshStep::reduce, windows);
    const bool after_r = !order.empty() && order.back() == MeshStep::reduce;
    MeshStep pick = MeshStep::reduce;
    if (r_ok && !after_r) {
      pick = MeshStep::reduce;
    } else if (q_ok && kv_ok) {
      if (q_score > kv_score) {
        pick = MeshStep::q;
      } else if (kv_score > q_score) {
        pick = MeshStep::kv;
      } else {
        pick = kv_bytes < q_bytes ? MeshStep::kv : MeshStep::q;
      }
    } else if (q_ok) {
      pick = MeshStep::q;
    } else if (kv_ok) {
      pick = MeshStep::kv;
    } else if (!r_ok) {
      throw std::invalid_argument(
          "no mesh step order fits these windows: the Q and KV windows are both smaller than "
          "their rings");
    }
    order.push_back(pick);
    advance(done, pick);
  }
  return order;
}

std::vector<MeshOrder> all_mesh_orders(int a, int b, MeshWindows windows) {
  check_windows(windows);
  std::vector<MeshOrder> out;
  MeshOrder prefix;
  enumerate(a, b, windows, Progress{}, prefix, out);
  return out;
}

std::string to_string(const MeshOrder& order) {
  std::string s;
  for (MeshStep step : order) {
    s += step == MeshStep::q ? 'Q' : step == MeshStep::kv ? 'K' : 'R';
  }
  return s;
}

}  // namespace tilesim
