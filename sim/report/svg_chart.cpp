#include "sim/report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tilesim::svg {
namespace {

constexpr double kLeft = 70.0, kRight = 150.0, kTop = 34.0, kBottom = 48.0;
constexpr double kPlotW = kWidth - kLeft - kRight;
constexpr double kPlotH = kHeight - kTop - kBottom;

// 1, 2, 5 x 10^k steps: about `count` ticks from 0 to max.
double nice_step(double max, int count) {
  if (!(max > 0.0)) return 1.0;
  const double raw = max / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10.0 * mag;
}

std::string tick_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e7) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::string frame(const std::string& id, const std::string& title, const std::string& x_label,
                  const std::string& y_label) {
  return fmt::format(
      R"(<svg id="{}" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" )"
      R"(width="{}" height="{}" role="img"><title>{}</title>)"
      R"(<text class="chart-title" x="{}" y="20" font-size="15" font-weight="bold">{}</text>)"
      R"(<text class="axis-label" x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>)"
      R"~(<text class="axis-label" transform="translate(16 {}) rotate(-90)" )~"
      R"(text-anchor="middle" font-size="12">{}</text>)"
      R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)",
      escape(id), kWidth, kHeight, kWidth, kHeight, escape(title), kLeft, escape(title),
      kLeft + kPlotW / 2, kHeight - 8, escape(x_label), kTop + kPlotH / 2, escape(y_label), kLeft,
      kTop, kPlotW, kPlotH);
}

std::string y_ticks(double y_max, double scale, bool percent) {
  std::string out;
  const double step = nice_step(y_max, 5);
  for (double v = 0.0; v <= y_max * (1 + 1e-9); v += step) {
    const double y = kTop + kPlotH * (1.0 - v / y_max);
    out += fmt::format(R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" stroke="#eee"/>)"
                       R"(<text x="{}" y="{:.1f}" text-anchor="end" font-size="11">{}</text>)",
                       kLeft, kLeft + kPlotW, y, y, kLeft - 6, y + 4,
                       percent ? fmt::format("{:.0f}%", 100 * v) : tick_text(v * scale));
  }
  return out;
}

std::string legend_entry(std::size_t i, const std::string& name, const char* fill) {
  const double y = kTop + 8 + 18.0 * static_cast<double>(i);
  return fmt::format(R"(<rect x="{}" y="{:.1f}" width="12" height="12" fill="{}"/>)"
                     R"(<text class="legend" x="{}" y="{:.1f}" font-size="12">{}</text>)",
                     kLeft + kPlotW + 12, y, fill, kLeft + kPlotW + 30, y + 10, escape(name));
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* color(std::size_t index) {
  static constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                             "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kPalette[index % std::size(kPalette)];
}

std::string line_chart(const LineChartSpec& spec, const std::vector<Series>& series) {
  double x_min = 0.0, x_max = 1.0, y_max = 0.0;
  bool first = true;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      x_min = first ? x : std::min(x_min, x);
      x_max = first ? x : std::max(x_max, x);
      y_max = std::max(y_max, y);
      first = false;
    }
  }
  if (spec.ideal_line) y_max = std::max(y_max, x_max);
  if (spec.percent_y) y_max = std::max(y_max, 1.0);
  y_max = y_max > 0.0 ? y_max * 1.05 : 1.0;
  auto fx = [&](double x) {
    const double a = spec.log2_x ? std::log2(x_min) : x_min;
    const double b = spec.log2_x ? std::log2(x_max) : x_max;
    const double v = spec.log2_x ? std::log2(x) : x;
    return kLeft + (b > a ? (v - a) / (b - a) : 0.5) * kPlotW;
  };
  auto fy = [&](double y) { return kTop + kPlotH * (1.0 - y / y_max); };
  std::string out = frame(spec.id, spec.title, spec.x_label, spec.y_label);
  out += y_ticks(y_max, 1.0, spec.percent_y);
  for (double x : spec.x_ticks) {
    out += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="11">{}</text>)",
                       fx(x), kTop + kPlotH + 16, tick_text(x));
  }
  if (spec.ideal_line && !first) {
    out += fmt::format(R"(<path class="ideal" d="M{:.1f},{:.1f} L{:.1f},{:.1f}" stroke="#999" )"
                       R"(stroke-dasharray="5,4" fill="none"/>)",
                       fx(x_min), fy(x_min), fx(x_max), fy(x_max));
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    std::string d;
    for (const auto& [x, y] : s.points) {
      d += fmt::format("{}{:.1f},{:.1f} ", d.empty() ? "M" : "L", fx(x), fy(y));
    }
    // Earlier series are drawn wider, so that a curve another one covers exactly (ring and
    // zigzag without a causal mask) still shows as a border around it.
    const double under = static_cast<double>(series.size() - 1 - i);
    out += fmt::format(
        R"(<path class="curve" data-series="{}" d="{}" stroke="{}" stroke-width="{:.1f}" )"
        R"(fill="none"/>)",
        escape(s.name), d, color(i), 2.0 + 2.5 * under);
    for (const auto& [x, y] : s.points) {
      out += fmt::format(
          R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}"><title>{}: {} GPUs, {})"
          R"(</title></circle>)",
          fx(x), fy(y), 3.0 + 1.5 * under, color(i), escape(s.name), tick_text(x),
          spec.percent_y ? fmt::format("{:.1f}%", 100 * y) : fmt::format("{:.2f}", y));
    }
    out += legend_entry(i, s.name, color(i));
  }
  return out + "</svg>";
}

std::string lane_chart(const LaneChartSpec& spec, const std::vector<Box>& boxes) {
  const auto lanes = static_cast<double>(std::max<std::size_t>(1, spec.lane_names.size()));
  const double lane_h = kPlotH / lanes;
  auto fx = [&](double x) { return kLeft + x / spec.x_max * kPlotW; };
  std::string out = frame(spec.id, spec.title, spec.x_label, spec.y_label);
  const double step = nice_step(spec.x_max * spec.x_scale, 6) / spec.x_scale;
  for (double v = 0.0; v <= spec.x_max * (1 + 1e-9); v += step) {
    out += fmt::format(R"(<line x1="{:.1f}" x2="{:.1f}" y1="{}" y2="{}" stroke="#eee"/>)"
                       R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="11">{}</text>)",
                       fx(v), fx(v), kTop, kTop + kPlotH, fx(v), kTop + kPlotH + 16,
                       tick_text(v * spec.x_scale));
  }
  // A named lane's label is centred on it and the unnamed lanes after it (a GPU's pair).
  std::size_t labels = 0;
  for (const std::string& name : spec.lane_names) labels += name.empty() ? 0 : 1;
  for (std::size_t i = 0; labels <= 32 && i < spec.lane_names.size(); ++i) {
    if (spec.lane_names[i].empty()) continue;
    std::size_t span = 1;
    while (i + span < spec.lane_names.size() && spec.lane_names[i + span].empty()) ++span;
    out += fmt::format(
        R"(<text x="{}" y="{:.1f}" text-anchor="end" font-size="10">{}</text>)", kLeft - 4,
        kTop + lane_h * (static_cast<double>(i) + 0.5 * static_cast<double>(span)) + 3.5,
        escape(spec.lane_names[i]));
  }
  for (const Box& b : boxes) {
    out += fmt::format(R"(<rect class="box" x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" )"
                       R"(fill="{}"><title>{}</title></rect>)",
                       fx(b.x0), kTop + lane_h * b.lane + 0.5, std::max(0.3, fx(b.x1) - fx(b.x0)),
                       std::max(0.5, lane_h - 1.0), color(b.color), escape(b.tip));
  }
  for (std::size_t i = 0; i < spec.legend.size(); ++i) {
    out += legend_entry(i, spec.legend[i].first, color(spec.legend[i].second));
  }
  return out + "</svg>";
}

std::string stacked_bar_chart(const BarChartSpec& spec,
                              const std::vector<std::vector<double>>& bars) {
  double y_max = 0.0;
  for (const auto& bar : bars) {
    double sum = 0.0;
    for (double v : bar) sum += v;
    y_max = std::max(y_max, sum);
  }
  y_max = y_max > 0.0 ? y_max * 1.05 : 1.0;
  const double slot = kPlotW / static_cast<double>(std::max<std::size_t>(1, bars.size()));
  std::string out = frame(spec.id, spec.title, spec.x_label, spec.y_label);
  out += y_ticks(y_max, spec.y_scale, false);
  const std::size_t label_every = std::max<std::size_t>(1, bars.size() / 16);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double x = kLeft + slot * static_cast<double>(i);
    double base = 0.0;
    for (std::size_t k = 0; k < bars[i].size(); ++k) {
      const double v = bars[i][k];
      if (v <= 0.0) continue;
      const double y0 = kTop + kPlotH * (1.0 - (base + v) / y_max);
      out += fmt::format(
          R"(<rect class="bar" x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}">)"
          R"(<title>{} {}: {}</title></rect>)",
          x + slot * 0.1, y0, slot * 0.8, kPlotH * v / y_max, color(k),
          i < spec.bar_names.size() ? escape(spec.bar_names[i]) : "", escape(spec.legend[k]),
          tick_text(v * spec.y_scale));
      base += v;
    }
    if (i % label_every == 0 && i < spec.bar_names.size()) {
      out += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="10">{}</text>)",
                         x + slot / 2, kTop + kPlotH + 14, escape(spec.bar_names[i]));
    }
  }
  for (std::size_t k = 0; k < spec.legend.size(); ++k) {
    out += legend_entry(k, spec.legend[k], color(k));
  }
  return out + "</svg>";
}

}  // namespace tilesim::svg
