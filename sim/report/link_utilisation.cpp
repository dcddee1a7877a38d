#include "sim/report/link_utilisation.hpp"

#include <algorithm>

namespace tilesim {

std::vector<ClassUtilisation> link_utilisation(const Topology& topology,
                                               const SimulationResult& result, int bin_count) {
  std::vector<double> capacity(kLinkClassCount, 0.0);
  for (LinkId l = 0; l < topology.link_count(); ++l) {
    capacity[static_cast<std::size_t>(topology.link(l).cls)] +=
        topology.link(l).bandwidth_bytes_per_s;
  }
  const auto bins = static_cast<std::size_t>(std::max(1, bin_count));
  const double span_ps = static_cast<double>(std::max<Picoseconds>(1, result.makespan_ps));
  const double bin_ps = span_ps / static_cast<double>(bins);
  // byte_ps[class][bin]: integral of the class's load over the bin.
  std::vector<std::vector<double>> integral(kLinkClassCount, std::vector<double>(bins, 0.0));
  std::vector<LinkSample> samples = result.link_samples;
  std::stable_sort(samples.begin(), samples.end(),
                   [](const LinkSample& a, const LinkSample& b) { return a.time_ps < b.time_ps; });
  std::vector<double> link_load(static_cast<std::size_t>(topology.link_count()), 0.0);
  std::vector<double> class_load(kLinkClassCount, 0.0);
  double now_ps = 0.0;
  auto advance = [&](double to_ps) {  // the class loads stay constant over [now, to)
    to_ps = std::min(to_ps, span_ps);
    while (now_ps < to_ps) {
      auto bin = std::min(bins - 1, static_cast<std::size_t>(now_ps / bin_ps));
      // now_ps / bin_ps can round just below a bin's start that now_ps reached exactly.
      while (bin + 1 < bins && static_cast<double>(bin + 1) * bin_ps <= now_ps) ++bin;
      // The last bin runs to the end: bins x bin_ps may round below span_ps.
      const double end_ps =
          bin + 1 == bins ? to_ps : std::min(to_ps, static_cast<double>(bin + 1) * bin_ps);
      for (int c = 0; c < kLinkClassCount; ++c) {
        integral[static_cast<std::size_t>(c)][bin] +=
            class_load[static_cast<std::size_t>(c)] * (end_ps - now_ps);
      }
      now_ps = end_ps;
    }
  };
  for (const LinkSample& s : samples) {
    advance(static_cast<double>(s.time_ps));
    const auto cls = static_cast<std::size_t>(topology.link(s.link).cls);
    double& load = link_load[static_cast<std::size_t>(s.link)];
    class_load[cls] += s.load_bytes_per_s - load;
    load = s.load_bytes_per_s;
  }
  advance(span_ps);
  std::vector<ClassUtilisation> out;
  for (int c = 0; c < kLinkClassCount; ++c) {
    const auto ci = static_cast<std::size_t>(c);
    if (capacity[ci] <= 0.0) continue;
    ClassUtilisation u{static_cast<LinkClass>(c), {}};
    for (double byte_ps : integral[ci]) u.bins.push_back(byte_ps / (capacity[ci] * bin_ps));
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace tilesim
