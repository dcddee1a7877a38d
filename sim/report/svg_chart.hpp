// Inline SVG charts for the HTML report: no script, no external resource, so the page renders
// the same offline. Every chart is an <svg> with a title, two axis labels (class "axis-label")
// and its marks; a line chart draws one <path class="curve" data-series="NAME"> per series, so
// a reader (or a test) can count the curves.
//
// Geometry: a fixed 720 x 320 px viewBox with margins for ticks; values map linearly onto the
// plot area (or by log2 for a log x axis: GPU counts double).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tilesim::svg {

inline constexpr double kWidth = 720.0;
inline constexpr double kHeight = 320.0;

std::string escape(const std::string& text);  // for text nodes and attribute values
const char* color(std::size_t index);         // a qualitative palette, cycling

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); a gap where a run was left out
};

struct LineChartSpec {
  std::string id;
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log2_x = false;
  bool percent_y = false;   // y in 0..1, ticks as percent
  bool ideal_line = false;  // dashed y = x (perfect speedup), not a series
  std::vector<double> x_ticks;
};

std::string line_chart(const LineChartSpec& spec, const std::vector<Series>& series);

// A rectangle of a lane chart (timeline, stacked bars), in data units.
struct Box {
  double x0 = 0.0, x1 = 0.0;
  int lane = 0;
  std::size_t color = 0;
  std::string tip;  // <title> tooltip
};

struct LaneChartSpec {
  std::string id;
  std::string title;
  std::string x_label;  // e.g. "time (ms)"
  std::string y_label;  // e.g. "GPU (compute / comm lanes)"
  double x_max = 1.0;
  double x_scale = 1.0;                 // tick labels show x * x_scale
  std::vector<std::string> lane_names;  // "" continues the label of the named lane above
  std::vector<std::pair<std::string, std::size_t>> legend;  // name, color
};

std::string lane_chart(const LaneChartSpec& spec, const std::vector<Box>& boxes);

// Vertical stacked bars: bars[i] = the stacked values of bar i, in legend order.
struct BarChartSpec {
  std::string id;
  std::string title;
  std::string x_label;
  std::string y_label;
  double y_scale = 1.0;  // tick labels show y * y_scale
  std::vector<std::string> bar_names;
  std::vector<std::string> legend;
};

std::string stacked_bar_chart(const BarChartSpec& spec,
                              const std::vector<std::vector<double>>& bars);

}  // namespace tilesim::svg
