#include "svg_plot.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>

namespace mmdb::sample {
namespace {

constexpr double kAreaWidth = 600.0;  // the plot area; its height follows the data's aspect
constexpr double kMaxAreaHeight = 600.0;
constexpr double kMinAreaHeight = 200.0;
constexpr double kMarginLeft = 70.0;
constexpr double kMarginRight = 250.0;  // room for the legend
constexpr double kMarginTop = 50.0;
constexpr double kMarginBottom = 60.0;
constexpr double kWidth = kMarginLeft + kAreaWidth + kMarginRight;

struct Bounds {
  double min_x, max_x, min_y, max_y;
};

Bounds data_bounds(const std::vector<PlotSeries>& series, const std::vector<PlotMarker>& markers) {
  Bounds b{std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(),
           std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest()};
  for (const PlotSeries& s : series) {
    for (const glm::vec2& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      b.min_x = std::min(b.min_x, double(p.x));
      b.max_x = std::max(b.max_x, double(p.x));
      b.min_y = std::min(b.min_y, double(p.y));
      b.max_y = std::max(b.max_y, double(p.y));
    }
  }
  for (const PlotMarker& m : markers) {
    if (!std::isfinite(m.at.x) || !std::isfinite(m.at.y)) continue;
    b.min_x = std::min(b.min_x, double(m.at.x));
    b.max_x = std::max(b.max_x, double(m.at.x));
    b.min_y = std::min(b.min_y, double(m.at.y));
    b.max_y = std::max(b.max_y, double(m.at.y));
  }
  if (b.min_x > b.max_x) b = {-1.0, 1.0, -1.0, 1.0};  // nothing to draw: a unit view
  // At least a metre of extent on each axis, and a little air around the data.
  const double pad_x = std::max(0.5, 0.05 * (b.max_x - b.min_x));
  const double pad_y = std::max(0.5, 0.05 * (b.max_y - b.min_y));
  return {b.min_x - pad_x, b.max_x + pad_x, b.min_y - pad_y, b.max_y + pad_y};
}

// A "nice" tick spacing (1, 2 or 5 times a power of ten) giving about `target` intervals.
double tick_step(double extent, int target) {
  const double raw = extent / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10.0 * power;
}

std::string escape_xml(const std::string& text) {
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

// Maps data coordinates to the page with one scale for both axes, centred in the plot area,
// whose height follows the data's aspect ratio within limits.
class Mapping {
 public:
  Mapping(const Bounds& b, bool y_down, bool x_left) : b_(b), y_down_(y_down), x_left_(x_left) {
    const double extent_x = b.max_x - b.min_x;
    const double extent_y = b.max_y - b.min_y;
    scale_ = std::min(kAreaWidth / extent_x, kMaxAreaHeight / extent_y);
    const double area_h = std::max(kMinAreaHeight, scale_ * extent_y);
    page_height_ = kMarginTop + area_h + kMarginBottom;
    offset_x_ = kMarginLeft + 0.5 * (kAreaWidth - scale_ * extent_x);
    offset_y_ = kMarginTop + 0.5 * (area_h - scale_ * extent_y);
  }
  double page_height() const { return page_height_; }
  double x(double v) const {
    const double from_left = x_left_ ? b_.max_x - v : v - b_.min_x;
    return offset_x_ + from_left * scale_;
  }
  double y(double v) const {
    const double from_top = y_down_ ? v - b_.min_y : b_.max_y - v;
    return offset_y_ + from_top * scale_;
  }
  double left() const { return std::min(x(b_.min_x), x(b_.max_x)); }
  double right() const { return std::max(x(b_.min_x), x(b_.max_x)); }
  double top() const { return std::min(y(b_.min_y), y(b_.max_y)); }
  double bottom() const { return std::max(y(b_.min_y), y(b_.max_y)); }

 private:
  Bounds b_;
  bool y_down_, x_left_;
  double scale_, offset_x_, offset_y_, page_height_;
};

void write_grid(std::ostream& out, const Bounds& b, const Mapping& m) {
  const double step = tick_step(std::max(b.max_x - b.min_x, b.max_y - b.min_y), 8);
  out << "<g stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (double v = std::ceil(b.min_x / step) * step; v <= b.max_x; v += step)
    out << "<line x1=\"" << m.x(v) << "\" y1=\"" << m.top() << "\" x2=\"" << m.x(v) << "\" y2=\""
        << m.bottom() << "\"/>\n";
  for (double v = std::ceil(b.min_y / step) * step; v <= b.max_y; v += step)
    out << "<line x1=\"" << m.left() << "\" y1=\"" << m.y(v) << "\" x2=\"" << m.right()
        << "\" y2=\"" << m.y(v) << "\"/>\n";
  out << "</g>\n";
  out << "<rect x=\"" << m.left() << "\" y=\"" << m.top() << "\" width=\"" << m.right() - m.left()
      << "\" height=\"" << m.bottom() - m.top() << "\" fill=\"none\" stroke=\"#444444\"/>\n";
  out << "<g font-family=\"sans-serif\" font-size=\"12\" fill=\"#333333\">\n";
  // As many decimals as the step needs; "+ 0.0" turns -0 into 0.
  const int decimals = std::max(0, -int(std::floor(std::log10(step) + 1e-9)));
  out << std::setprecision(decimals);
  for (double v = std::ceil(b.min_x / step) * step; v <= b.max_x; v += step)
    out << "<text x=\"" << m.x(v) << "\" y=\"" << m.bottom() + 16 << "\" text-anchor=\"middle\">"
        << std::round(v / step) * step + 0.0 << "</text>\n";
  for (double v = std::ceil(b.min_y / step) * step; v <= b.max_y; v += step)
    out << "<text x=\"" << m.left() - 6 << "\" y=\"" << m.y(v) + 4 << "\" text-anchor=\"end\">"
        << std::round(v / step) * step + 0.0 << "</text>\n";
  out << std::setprecision(2);
  out << "</g>\n";
}

void write_labels(std::ostream& out, const PlotLabels& labels, const Mapping& m) {
  out << "<g font-family=\"sans-serif\" fill=\"#222222\">\n";
  out << "<text x=\"" << kWidth / 2 << "\" y=\"28\" font-size=\"18\" text-anchor=\"middle\">"
      << escape_xml(labels.title) << "</text>\n";
  out << "<text x=\"" << 0.5 * (m.left() + m.right()) << "\" y=\"" << m.bottom() + 40
      << "\" font-size=\"14\" text-anchor=\"middle\">" << escape_xml(labels.x_axis) << "</text>\n";
  const double cy = 0.5 * (m.top() + m.bottom());
  out << "<text x=\"20\" y=\"" << cy << "\" font-size=\"14\" text-anchor=\"middle\" "
      << "transform=\"rotate(-90 20 " << cy << ")\">" << escape_xml(labels.y_axis) << "</text>\n";
  out << "</g>\n";
}

void write_series(std::ostream& out, const PlotSeries& s, const Mapping& m) {
  out << "<polyline fill=\"none\" stroke=\"" << escape_xml(s.colour)
      << "\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"";
  bool first = true;
  for (const glm::vec2& p : s.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    out << (first ? "" : " ") << m.x(p.x) << ',' << m.y(p.y);
    first = false;
  }
  out << "\"/>\n";
  // Mark where the path starts, so the direction of travel can be read.
  if (!s.points.empty())
    out << "<circle cx=\"" << m.x(s.points.front().x) << "\" cy=\"" << m.y(s.points.front().y)
        << "\" r=\"4\" fill=\"" << escape_xml(s.colour) << "\"/>\n";
}

void write_marker_shape(std::ostream& out, PlotMarker::Shape shape, double x, double y,
                        const std::string& colour) {
  if (shape == PlotMarker::Shape::Dot) {
    out << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"3\" fill=\"" << escape_xml(colour)
        << "\"/>\n";
    return;
  }
  out << "<path d=\"M" << x - 4 << ',' << y - 4 << " L" << x + 4 << ',' << y + 4 << " M" << x - 4
      << ',' << y + 4 << " L" << x + 4 << ',' << y - 4 << "\" stroke=\"" << escape_xml(colour)
      << "\" stroke-width=\"2\"/>\n";
}

// A rectangle on the page.
struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool inside(const Box& o) const { return x0 >= o.x0 && x1 <= o.x1 && y0 >= o.y0 && y1 <= o.y1; }
};

struct LabelPlace {
  double x = 0, y = 0;  // the text's anchor point on its baseline
  bool end = false;     // anchored at its end (drawn left of the point)
  bool leader = false;  // far from its marker: a thin line joins them
};

// Places each marker's label beside it where it overlaps nothing already there (labels placed
// before it, any marker) and stays in the plot area; nullopt where no place is free. The first
// markers get the first choice, so the caller orders them by importance.
std::vector<std::optional<LabelPlace>> place_labels(const std::vector<PlotMarker>& markers,
                                                    const Mapping& m) {
  const Box area{m.left(), m.top(), m.right(), m.bottom()};
  std::vector<Box> taken;
  for (const PlotMarker& marker : markers) {
    if (!std::isfinite(marker.at.x) || !std::isfinite(marker.at.y)) continue;
    const double x = m.x(marker.at.x), y = m.y(marker.at.y);
    taken.push_back({x - 5, y - 5, x + 5, y + 5});
  }
  // Right above, right below, left above, left below, level either side; then a line further
  // up or down, joined to the marker by a leader.
  struct Offset {
    double dx, dy;
    bool end, leader;
  };
  constexpr Offset kOffsets[] = {
      {6, -5, false, false}, {6, 13, false, false}, {-6, -5, true, false}, {-6, 13, true, false},
      {8, 4, false, false},  {-8, 4, true, false},  {6, -18, false, true}, {6, 26, false, true},
      {-6, -18, true, true}, {-6, 26, true, true},  {6, -31, false, true}, {6, 39, false, true},
      {-6, -31, true, true}, {-6, 39, true, true},
  };
  std::vector<std::optional<LabelPlace>> places(markers.size());
  for (size_t i = 0; i < markers.size(); ++i) {
    const PlotMarker& marker = markers[i];
    if (marker.label.empty() || !std::isfinite(marker.at.x) || !std::isfinite(marker.at.y))
      continue;
    const double x = m.x(marker.at.x), y = m.y(marker.at.y);
    const double width = kLabelCharWidth * double(marker.label.size());
    for (const Offset& o : kOffsets) {
      const double bx = x + o.dx, by = y + o.dy;
      const Box box{o.end ? bx - width : bx, by - 9, o.end ? bx : bx + width, by + 3};
      if (!box.inside(area)) continue;
      if (std::any_of(taken.begin(), taken.end(), [&](const Box& t) { return t.overlaps(box); }))
        continue;
      taken.push_back(box);
      places[i] = LabelPlace{bx, by, o.end, o.leader};
      break;
    }
  }
  return places;
}

// Draws the markers and the labels that fit; returns how many labels were left out.
size_t write_markers(std::ostream& out, const std::vector<PlotMarker>& markers, const Mapping& m) {
  const std::vector<std::optional<LabelPlace>> places = place_labels(markers, m);
  size_t left_out = 0;
  out << "<g font-family=\"sans-serif\" font-size=\"10\">\n";
  for (size_t i = 0; i < markers.size(); ++i) {
    const PlotMarker& marker = markers[i];
    if (!std::isfinite(marker.at.x) || !std::isfinite(marker.at.y)) continue;
    const double x = m.x(marker.at.x), y = m.y(marker.at.y);
    out << "<g class=\"marker\">";
    if (!marker.label.empty()) out << "<title>" << escape_xml(marker.label) << "</title>";
    write_marker_shape(out, marker.shape, x, y, marker.colour);
    out << "</g>\n";
    if (marker.label.empty()) continue;
    if (!places[i]) {
      ++left_out;
      continue;
    }
    const LabelPlace& p = *places[i];
    if (p.leader)
      out << "<line x1=\"" << x << "\" y1=\"" << y << "\" x2=\"" << p.x << "\" y2=\"" << p.y - 4
          << "\" stroke=\"" << escape_xml(marker.colour) << "\" stroke-width=\"0.5\"/>\n";
    out << "<text class=\"marker-label\" x=\"" << p.x << "\" y=\"" << p.y << "\""
        << (p.end ? " text-anchor=\"end\"" : "") << " fill=\"" << escape_xml(marker.colour) << "\">"
        << escape_xml(marker.label) << "</text>\n";
  }
  out << "</g>\n";
  return left_out;
}

void write_legend(std::ostream& out, const std::vector<PlotSeries>& series,
                  const std::vector<PlotMarker>& markers, const MarkerLegend& marker_legend) {
  const double x = kWidth - kMarginRight + 15;
  double y = kMarginTop + 10;
  out << "<g font-family=\"sans-serif\" font-size=\"13\" fill=\"#222222\">\n";
  for (const PlotSeries& s : series) {
    out << "<line x1=\"" << x << "\" y1=\"" << y << "\" x2=\"" << x + 24 << "\" y2=\"" << y
        << "\" stroke=\"" << escape_xml(s.colour) << "\" stroke-width=\"3\"/>\n";
    out << "<text x=\"" << x + 30 << "\" y=\"" << y + 4 << "\">" << escape_xml(s.name)
        << "</text>\n";
    y += 22;
  }
  for (const PlotMarker::Shape shape : {PlotMarker::Shape::Dot, PlotMarker::Shape::Cross}) {
    const std::string& text =
        shape == PlotMarker::Shape::Dot ? marker_legend.dot : marker_legend.cross;
    const auto used = std::find_if(markers.begin(), markers.end(),
                                   [shape](const PlotMarker& m) { return m.shape == shape; });
    if (text.empty() || used == markers.end()) continue;
    write_marker_shape(out, shape, x + 12, y, used->colour);
    out << "<text x=\"" << x + 30 << "\" y=\"" << y + 4 << "\">" << escape_xml(text) << "</text>\n";
    y += 22;
  }
  out << "<text x=\"" << x << "\" y=\"" << y + 4 << "\" fill=\"#555555\">dot: start</text>\n";
  out << "</g>\n";
}

}  // namespace

void write_svg_plot(std::ostream& out, const std::vector<PlotSeries>& series,
                    const PlotLabels& labels, const std::vector<PlotMarker>& markers,
                    const MarkerLegend& marker_legend) {
  const Bounds bounds = data_bounds(series, markers);
  const Mapping mapping(bounds, labels.y_down, labels.x_left);
  out << std::fixed << std::setprecision(2);
  const double height = mapping.page_height() + 20;  // room for the note on left-out labels
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << kWidth << ' ' << height << "\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  write_grid(out, bounds, mapping);
  for (const PlotSeries& s : series) write_series(out, s, mapping);
  const size_t left_out = write_markers(out, markers, mapping);
  write_labels(out, labels, mapping);
  if (left_out > 0)
    out << "<text class=\"note\" x=\"" << mapping.left() << "\" y=\"" << height - 12
        << "\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#555555\">" << left_out << " of "
        << std::count_if(markers.begin(), markers.end(),
                         [](const PlotMarker& marker) { return !marker.label.empty(); })
        << " labels are left out where they would cover others; hover a mark to read its "
           "label.</text>\n";
  write_legend(out, series, markers, marker_legend);
  out << "</svg>\n";
}

bool write_svg_plot_file(const std::string& path, const std::vector<PlotSeries>& series,
                         const PlotLabels& labels, std::string& error,
                         const std::vector<PlotMarker>& markers,
                         const MarkerLegend& marker_legend) {
  std::ostringstream text;
  write_svg_plot(text, series, labels, markers, marker_legend);
  // Written beside the target and renamed over it, so a reader never sees half a plot and a
  // failed write leaves the previous plot as it was.
  const std::string partial = path + ".partial";
  std::ofstream file(partial, std::ios::binary | std::ios::trunc);
  if (file) file << text.str();
  if (file) file.close();
  if (!file) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    return false;
  }
  std::error_code renamed;
  std::filesystem::rename(partial, path, renamed);
  if (renamed) {
    error = "cannot write '" + path + "': " + renamed.message();
    std::filesystem::remove(partial, renamed);
    return false;
  }
  return true;
}

}  // namespace mmdb::sample
