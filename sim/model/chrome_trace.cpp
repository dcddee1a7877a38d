#include "sim/model/chrome_trace.hpp"

#include <fmt/format.h>

namespace tilesim {
namespace {

std::string us(Picoseconds ps) {
  // Microseconds with six decimals = whole picoseconds, exact and stable.
  return fmt::format("{}.{:06d}", ps / 1'000'000, ps % 1'000'000);
}

constexpr int kLinksPid = 1'000'000;

}  // namespace

void write_chrome_trace(std::ostream& out, const Plan& plan, const SimulationResult& result,
                        const std::vector<int>& placement, const Topology* topology) {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& event) {
    if (!first) out << ",\n";
    first = false;
    out << event;
  };
  for (int r = 0; r < plan.ranks; ++r) {
    const int gpu = placement.empty() ? r : placement[static_cast<std::size_t>(r)];
    emit(fmt::format(
        R"j({{"ph":"M","pid":{},"name":"process_name","args":{{"name":"GPU {} (rank {})"}}}})j", r,
        gpu, r));
    emit(fmt::format(
        R"j({{"ph":"M","pid":{},"tid":0,"name":"thread_name","args":{{"name":"compute"}}}})j", r));
    emit(fmt::format(
        R"j({{"ph":"M","pid":{},"tid":1,"name":"thread_name","args":{{"name":"comm"}}}})j", r));
  }
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    const auto& timings = result.ops[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind != OpKind::compute && op.kind != OpKind::merge) continue;
      const OpTiming& t = timings[static_cast<std::size_t>(i)];
      if (t.start_ps < 0) continue;
      std::string name = "merge";
      if (op.kind == OpKind::compute) {
        const auto pairs = program.pairs(i);
        name = pairs.size() == 1 ? fmt::format("{} {}x{}", to_string(op.pass), pairs[0].q_chunk,
                                               pairs[0].kv_chunk)
                                 : fmt::format("{} {} pairs", to_string(op.pass), pairs.size());
      }
      emit(fmt::format(
          R"j({{"ph":"X","pid":{},"tid":0,"name":"{}","cat":"{}","ts":{},"dur":{},"args":{{"rank":{},"op":{}}}}})j",
          r, name, to_string(op.kind), us(t.start_ps), us(t.end_ps - t.start_ps), r, i));
    }
  }
  for (const TransferRecord& t : result.transfers) {
    const std::string& obj = plan.object(t.object).name;
    for (const auto& [id, label] : {std::pair{t.send, "send"}, std::pair{t.recv, "recv"}}) {
      emit(fmt::format(
          R"j({{"ph":"X","pid":{},"tid":1,"name":"{} {}","cat":"{}","ts":{},"dur":{},"args":{{"rank":{},"op":{},"bytes":{:.0f},"peer":{}}}}})j",
          id.rank, label, obj, label, us(t.posted_ps), us(t.end_ps - t.posted_ps), id.rank,
          id.index, t.bytes, id.rank == t.send.rank ? t.recv.rank : t.send.rank));
    }
  }
  if (topology != nullptr && !result.link_samples.empty()) {
    emit(fmt::format(R"j({{"ph":"M","pid":{},"name":"process_name","args":{{"name":"links"}}}})j",
                     kLinksPid));
    for (const LinkSample& s : result.link_samples) {
      const Link& link = topology->link(s.link);
      const std::string name =
          fmt::format("{}->{} ({})", topology->device(topology->link_source(s.link)).name,
                      topology->device(topology->link_target(s.link)).name, to_string(link.cls));
      emit(fmt::format(R"j({{"ph":"C","pid":{},"name":"{}","ts":{},"args":{{"GB/s":{:.3f}}}}})j",
                       kLinksPid, name, us(s.time_ps), s.load_bytes_per_s / 1e9));
    }
  }
  out << "\n]}\n";
}

}  // namespace tilesim
