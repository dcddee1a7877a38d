// All-to-all and all-gather as point-to-point ops: the pairwise exchange.
//
// Over n members (ranks), in step t = 1..n-1 member i sends to member
// (i + t) mod n and receives from member (i - t) mod n, one comm group per
// step. Every rank posts the same sequence of groups and each group pairs one
// send with one receive per peer, so the order is deadlock-free under NCCL
// group semantics, and a member's send and receive links are each used by one
// transfer at a time. objects(from, to) lists the objects member `from` sends
// to member `to`; the receiver receives the same list in the same order.
// Each member receives sum over the n-1 other members of their lists.
#pragma once

#include <functional>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

using ExchangeObjects = std::function<std::vector<int>(int from_member, int to_member)>;

void add_pairwise_exchange(Plan& plan, CommGroups& groups, const std::vector<int>& members,
                           const ExchangeObjects& objects);

}  // namespace tilesim
