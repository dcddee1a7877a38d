#include "sim/plan/program_builder.hpp"

#include <vector>

namespace tilesim {

int ProgramBuilder::compute(int rank, int q_chunk, int kv_chunk, Pass pass,
                            std::span<const int> reads, std::span<const int> writes,
                            std::span<const int> after) {
  const ChunkPair pair[] = {{q_chunk, kv_chunk}};
  return compute(rank, pair, pass, reads, writes, after);
}

int ProgramBuilder::compute(int rank, std::span<const ChunkPair> pairs, Pass pass,
                            std::span<const int> reads, std::span<const int> writes,
                            std::span<const int> after) {
  Op op;
  op.pass = pass;
  return program(rank).add_compute(op, pairs, reads, writes, after);
}

int ProgramBuilder::send(int rank, int object, int to, int group, std::span<const int> after) {
  Op op;
  op.kind = OpKind::send;
  op.peer = to;
  op.comm_group = group;
  const int reads[] = {object};
  return program(rank).add(op, reads, {}, after);
}

int ProgramBuilder::recv(int rank, int object, int from, int group, std::span<const int> after) {
  Op op;
  op.kind = OpKind::recv;
  op.peer = from;
  op.comm_group = group;
  const int writes[] = {object};
  return program(rank).add(op, {}, writes, after);
}

int ProgramBuilder::merge(int rank, std::span<const int> partials, std::span<const int> targets,
                          std::span<const int> after) {
  Op op;
  op.kind = OpKind::merge;
  // A merge reads the targets' current contents as well as the partials.
  std::vector<int> reads(partials.begin(), partials.end());
  return program(rank).add(op, reads, targets, after);
}

int ProgramBuilder::free(int rank, int object, std::span<const int> after) {
  Op op;
  op.kind = OpKind::free;
  const int writes[] = {object};
  return program(rank).add(op, {}, writes, after);
}

}  // namespace tilesim
