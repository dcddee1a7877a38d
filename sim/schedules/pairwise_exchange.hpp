// All-to-all and all-gather as point-to-point ops, posted as NCCL runs them.
//
// Over n members (ranks), every member posts, in ONE comm group, a send to each
// other member and a receive from each other member, the way
// `ncclGroupStart(); for peers: ncclSend; ncclRecv; ncclGroupEnd()` does (torch's
// all_to_all_single; an all-gather as a set of grouped send/recv). The n-1
// transfers of a member then share its links under max-min and pay alpha once
// each, concurrently, instead of n-1 rounds in sequence. Sends and receives are
// listed in the pairwise order (send to i+t, receive from i-t, t = 1..n-1), so
// the k-th send a->b still matches the k-th receive b<-a. objects(from, to) lists
// the objects member `from` sends to member `to`; the receiver receives the same
// list in the same order. Each member receives sum over the n-1 other members
// of their lists (bytes unchanged from a round-by-round exchange). A list may be empty (a
// sliding window needs only some peers); a member with no transfer at all posts no group.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

using ExchangeObjects = std::function<std::vector<int>(int from_member, int to_member)>;

// emit_members >= 0: the programs of members 0..emit_members-1 only (an offset quotient's,
// class_plan.hpp: the exchange of all P ranks seen from its representatives).
void add_pairwise_exchange(Plan& plan, CommGroups& groups, const std::vector<int>& members,
                           const ExchangeObjects& objects, int emit_members = -1);

// Member i's part of the exchange alone (add_pairwise_exchange runs it for every member in
// order): a generator that emits one rank's program at a time (usp_classes_source.hpp). Its
// receives wait for `recv_after` (ops of its program) too.
void add_pairwise_exchange_member(Plan& plan, CommGroups& groups, const std::vector<int>& members,
                                  int i, const ExchangeObjects& objects,
                                  std::span<const int> recv_after = {});

}  // namespace tilesim
