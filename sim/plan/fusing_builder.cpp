#include "sim/plan/fusing_builder.hpp"

#include "sim/core/interrupt.hpp"

namespace tilesim {

FusingBuilder::FusingBuilder(Plan& plan, FusingScratch& scratch, int rank, bool fuse)
    : build_(plan), scratch_(&scratch), rank_(rank), fuse_(fuse) {
  // A generator builds one rank's program (or step) per builder: a safe point to stop, so a
  // plan of millions of ops answers SIGINT/SIGTERM while it is built (core/interrupt.hpp).
  throw_if_interrupted();
  if (scratch_->read_stamp.size() < plan.objects.size()) {
    scratch_->read_stamp.resize(plan.objects.size(), 0);
    scratch_->write_stamp.resize(plan.objects.size(), 0);
  }
  ++scratch_->batch;
}

void FusingBuilder::list(std::vector<int>& into, std::vector<std::uint32_t>& stamps,
                         std::span<const int> objects) {
  for (int obj : objects) {
    std::uint32_t& stamp = stamps[static_cast<std::size_t>(obj)];
    if (stamp == scratch_->batch) continue;
    stamp = scratch_->batch;
    into.push_back(obj);
  }
}

std::size_t FusingBuilder::unlisted(const std::vector<std::uint32_t>& stamps,
                                    std::span<const int> objects) const {
  std::size_t n = 0;
  for (int obj : objects) n += stamps[static_cast<std::size_t>(obj)] != scratch_->batch ? 1 : 0;
  return n;
}

void FusingBuilder::compute(ChunkPair pair, Pass pass, std::span<const int> reads,
                            std::span<const int> writes) {
  // Op's pair and reference counts are 16 bits: a call over more pairs, or reading or writing
  // more objects (all-gather KV's one call reads P + 1 on 65536 GPUs), is split in two ops.
  constexpr std::size_t kMaxCount = 0xffff;
  if (!pairs_.empty() && (pass != pass_ || pairs_.size() == kMaxCount ||
                          reads_.size() + unlisted(scratch_->read_stamp, reads) > kMaxCount ||
                          writes_.size() + unlisted(scratch_->write_stamp, writes) > kMaxCount)) {
    flush();
  }
  pass_ = pass;
  pairs_.push_back(pair);
  list(reads_, scratch_->read_stamp, reads);
  list(writes_, scratch_->write_stamp, writes);
  if (!fuse_) flush();
}

void FusingBuilder::flush() {
  if (pairs_.empty()) return;
  build_.compute(rank_, pairs_, pass_, reads_, writes_, after_);
  pairs_.clear();
  reads_.clear();
  writes_.clear();
  after_.clear();
  ++scratch_->batch;
}

void FusingBuilder::wait_before_next_compute(std::span<const int> ops) {
  after_.insert(after_.end(), ops.begin(), ops.end());
}

int FusingBuilder::send(int object, int to, int group, std::span<const int> after) {
  flush();
  return build_.send(rank_, object, to, group, after);
}

int FusingBuilder::recv(int object, int from, int group, std::span<const int> after) {
  flush();
  return build_.recv(rank_, object, from, group, after);
}

int FusingBuilder::merge(std::span<const int> partials, std::span<const int> targets) {
  flush();
  return build_.merge(rank_, partials, targets);
}

int FusingBuilder::free(int object) {
  flush();
  return build_.free(rank_, object);
}

}  // namespace tilesim
