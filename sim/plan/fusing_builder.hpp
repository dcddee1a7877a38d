// A ProgramBuilder for one rank that fuses consecutive block computes into one
// compute op (plan.hpp: a compute over several chunk pairs is one launch).
//
// compute() only collects the pair and its objects; the collected pairs become
// one op when any other op is emitted or flush() is called. A fused op starts
// when the inputs of all its pairs are in, so a generator fuses pairs that
// become ready together (the chunks one comm step brought) and flushes where a
// later op should depend on only part of them. Mesh emits at most 3a + b - 2
// fused ops per rank instead of a * b block ops (252 instead of 4096 at 64x64),
// which is what lets 4096 GPUs simulate in seconds; it also matches a real
// kernel, which would not launch once per 256-token block.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/plan/plan.hpp"
#include "sim/plan/program_builder.hpp"

namespace tilesim {

// Marks which objects the pending fused op already lists; shared by the ranks'
// builders so that one plan-sized array serves them all.
struct FusingScratch {
  std::vector<std::uint32_t> read_stamp;   // per object: the batch that last read it
  std::vector<std::uint32_t> write_stamp;  // per object: the batch that last wrote it
  std::uint32_t batch = 0;
};

class FusingBuilder {
 public:
  // fuse = false emits every compute() as its own op (per-block plans).
  FusingBuilder(Plan& plan, FusingScratch& scratch, int rank, bool fuse);
  FusingBuilder(const FusingBuilder&) = delete;
  FusingBuilder& operator=(const FusingBuilder&) = delete;
  ~FusingBuilder() = default;

  void compute(ChunkPair pair, Pass pass, std::span<const int> reads, std::span<const int> writes);
  int send(int object, int to, int group, std::span<const int> after = {});
  int recv(int object, int from, int group, std::span<const int> after = {});
  int merge(std::span<const int> partials, std::span<const int> targets);
  int free(int object);
  // Emits the collected pairs as one compute op (nothing if none).
  void flush();
  // The next compute op emitted also waits for these ops of the rank (its `after`).
  void wait_before_next_compute(std::span<const int> ops);

 private:
  void list(std::vector<int>& into, std::vector<std::uint32_t>& stamps,
            std::span<const int> objects);
  // How many of `objects` the pending op does not list yet.
  std::size_t unlisted(const std::vector<std::uint32_t>& stamps,
                       std::span<const int> objects) const;

  ProgramBuilder build_;
  FusingScratch* scratch_;
  int rank_;
  bool fuse_;
  Pass pass_ = Pass::fwd;
  std::vector<ChunkPair> pairs_;
  std::vector<int> reads_, writes_, after_;
};

}  // namespace tilesim
