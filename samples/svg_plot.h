// A minimal SVG line plot: a few named polylines on equal-scale axes with a grid, tick labels,
// a legend and a title. Enough to look at trajectories in a browser; nothing more.
#pragma once

#include <glm/vec2.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace mmdb::sample {

struct PlotSeries {
  std::string name;    // legend text
  std::string colour;  // any SVG colour, e.g. "#1f77b4"
  std::vector<glm::vec2> points;
};

struct PlotLabels {
  std::string title;
  std::string x_axis;  // e.g. "x (m)"
  std::string y_axis;
  bool y_down = false;  // true: larger y is drawn lower on the page (screen convention)
  bool x_left = false;  // true: larger x is drawn further left (seen from above with +z up)
};

// A labelled point: a time along a path (a dot) or an event such as a jump (a cross).
struct PlotMarker {
  enum class Shape { Dot, Cross };
  glm::vec2 at{0.0f};
  std::string label;  // drawn beside the point
  std::string colour;
  Shape shape = Shape::Dot;
};

// Writes the plot as a complete SVG document. Both axes use the same scale, so shapes are not
// distorted. Series with no points are listed in the legend but draw nothing. Markers are drawn
// over the series; `marker_legend` names each shape that is used ("" leaves it out). The legend
// sits right of the plot area, outside the data.
//
// Marker labels are placed in the given order beside their marker where they overlap no other
// label, no marker and nothing outside the plot area; a label that fits nowhere is left out of
// the drawing (a note under the plot counts them) and, like every label, shows as the marker's
// tooltip. Placement assumes kLabelCharWidth pixels a character at the labels' 10 px font, a
// little wider than common sans-serif fonts draw it.
constexpr double kLabelCharWidth = 6.2;
constexpr double kLabelHeight = 12.0;  // from 9 px above the baseline to 3 px below

struct MarkerLegend {
  std::string dot;
  std::string cross;
};
void write_svg_plot(std::ostream& out, const std::vector<PlotSeries>& series,
                    const PlotLabels& labels, const std::vector<PlotMarker>& markers = {},
                    const MarkerLegend& marker_legend = {});

// Writes the plot to a file; returns false (and leaves `error` set) when the file cannot be
// written.
bool write_svg_plot_file(const std::string& path, const std::vector<PlotSeries>& series,
                         const PlotLabels& labels, std::string& error,
                         const std::vector<PlotMarker>& markers = {},
                         const MarkerLegend& marker_legend = {});

}  // namespace mmdb::sample
