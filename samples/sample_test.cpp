// Known answers for the sample's own parts: the SVG writer and the command line. The stick script
// is the runtime's, tested with it (tests/runtime/test_stick_script.cpp).
#include "sample_options.h"
#include "svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

namespace mmdb::sample {
namespace {

// The points of the index-th <polyline> of an SVG document, in page coordinates.
std::vector<std::pair<double, double>> polyline_points(const std::string& svg, int index) {
  size_t at = 0;
  for (int i = 0; i <= index; ++i) {
    at = svg.find("<polyline ", at);
    if (at == std::string::npos) return {};
    if (i < index) ++at;
  }
  const std::string key = "points=\"";
  const size_t begin = svg.find(key, at) + key.size();
  const size_t end = svg.find('"', begin);
  std::istringstream in(svg.substr(begin, end - begin));
  std::vector<std::pair<double, double>> points;
  double x = 0, y = 0;
  char comma = 0;
  while (in >> x >> comma >> y) points.emplace_back(x, y);
  return points;
}

TEST(SvgPlot, WritesTwoPolylinesWithLegendAndEscapedText) {
  std::vector<PlotSeries> series{
      {"desired", "#1f77b4", {{0.0f, 0.0f}, {1.0f, 2.0f}, {2.0f, 4.0f}}},
      {"achieved <root> & co", "#d62728", {{0.0f, 0.0f}, {1.0f, 1.0f}}},
  };
  PlotLabels labels{"Top \"view\"", "x (m)", "z (m)", false};
  std::ostringstream out;
  write_svg_plot(out, series, labels);
  const std::string svg = out.str();
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(polyline_points(svg, 0).size(), 3u);
  EXPECT_EQ(polyline_points(svg, 1).size(), 2u);
  EXPECT_TRUE(polyline_points(svg, 2).empty());
  EXPECT_NE(svg.find(">desired</text>"), std::string::npos);
  EXPECT_NE(svg.find(">achieved &lt;root&gt; &amp; co</text>"), std::string::npos);
  EXPECT_NE(svg.find(">Top &quot;view&quot;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">x (m)</text>"), std::string::npos);
}

TEST(SvgPlot, MarkersAreDrawnLabelledAndListedInTheLegend) {
  const std::vector<PlotSeries> series{{"path", "#1f77b4", {{0.0f, 0.0f}, {4.0f, 0.0f}}}};
  const std::vector<PlotMarker> markers{
      {{0.0f, 0.0f}, "0 s", "#1f77b4", PlotMarker::Shape::Dot},
      {{2.0f, 0.0f}, "walk & turn", "#d62728", PlotMarker::Shape::Cross},
      {{9.0f, 3.0f}, "far", "#d62728", PlotMarker::Shape::Cross},  // widens the view
  };
  std::ostringstream out;
  write_svg_plot(out, series, {"t", "x", "y", false}, markers, {"seconds", "jumps"});
  const std::string svg = out.str();
  EXPECT_NE(svg.find(">0 s</text>"), std::string::npos);
  EXPECT_NE(svg.find(">walk &amp; turn</text>"), std::string::npos);
  EXPECT_NE(svg.find(">far</text>"), std::string::npos);
  EXPECT_NE(svg.find(">seconds</text>"), std::string::npos);
  EXPECT_NE(svg.find(">jumps</text>"), std::string::npos);
  // Two crosses in the plot and one in the legend.
  size_t crosses = 0;
  for (size_t at = svg.find("<path d=\"M"); at != std::string::npos;
       at = svg.find("<path d=\"M", at + 1))
    ++crosses;
  EXPECT_EQ(crosses, 3u);
  // The far marker is inside the view: the path no longer spans the plot's width.
  const auto p = polyline_points(svg, 0);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_LT(p[1].first - p[0].first, 400.0);
  // Without markers the legend names no marker shape.
  std::ostringstream plain;
  write_svg_plot(plain, series, {"t", "x", "y", false}, {}, {"seconds", "jumps"});
  EXPECT_EQ(plain.str().find(">seconds</text>"), std::string::npos);
}

TEST(SvgPlot, EqualScaleAndAxisDirection) {
  const std::vector<PlotSeries> series{{"a", "black", {{0.0f, 0.0f}, {4.0f, 2.0f}}}};
  for (bool y_down : {false, true}) {
    std::ostringstream out;
    write_svg_plot(out, series, {"t", "x", "y", y_down});
    const auto p = polyline_points(out.str(), 0);
    ASSERT_EQ(p.size(), 2u);
    const double dx = p[1].first - p[0].first;
    const double dy = p[1].second - p[0].second;
    EXPECT_GT(dx, 0.0);
    EXPECT_NEAR(std::abs(dy), dx / 2.0, 0.02);  // one scale for both axes
    EXPECT_EQ(dy > 0.0, y_down);                // page y grows downwards
  }
}

TEST(SvgPlot, SkipsNonFinitePointsAndHandlesNoData) {
  const float nan = std::nanf("");
  std::vector<PlotSeries> series{{"a", "black", {{0.0f, 0.0f}, {nan, 1.0f}, {1.0f, 1.0f}}},
                                 {"empty", "red", {}}};
  std::ostringstream out;
  write_svg_plot(out, series, {"t", "x", "y", false});
  EXPECT_EQ(polyline_points(out.str(), 0).size(), 2u);
  EXPECT_EQ(out.str().find("nan"), std::string::npos);

  std::ostringstream nothing;
  write_svg_plot(nothing, {}, {"t", "x", "y", false});
  EXPECT_EQ(nothing.str().rfind("<svg ", 0), 0u);
}

TEST(SvgPlot, ReportsAnUnwritableFile) {
  std::string error;
  EXPECT_FALSE(write_svg_plot_file("/nonexistent-dir/plot.svg", {}, {}, error));
  EXPECT_NE(error.find("/nonexistent-dir/plot.svg"), std::string::npos) << error;
}

bool parse(std::vector<const char*> args, SampleOptions& options, std::string& error) {
  args.insert(args.begin(), "mmdb_sample");
  return parse_options(int(args.size()), args.data(), options, error);
}

TEST(SampleOptions, DefaultsAndEveryOption) {
  SampleOptions o;
  std::string error;
  ASSERT_TRUE(parse({"db.mmdb"}, o, error)) << error;
  EXPECT_EQ(o.database_path, "db.mmdb");
  EXPECT_EQ(o.characters, 1);
  EXPECT_DOUBLE_EQ(o.seconds, 20.0);
  EXPECT_EQ(o.svg_path, "sample.svg");
  EXPECT_EQ(o.stick_path, "");
  EXPECT_FALSE(o.exhaustive || o.quiet_decisions || o.gpu || o.explain || o.help);

  o = {};
  ASSERT_TRUE(parse({"--characters", "8", "--seconds", "2.5", "--exhaustive", "db.mmdb",
                     "--quiet-decisions", "--svg", "out.svg", "--gpu", "--stick", "walk.stick"},
                    o, error))
      << error;
  EXPECT_EQ(o.characters, 8);
  EXPECT_DOUBLE_EQ(o.seconds, 2.5);
  EXPECT_TRUE(o.exhaustive && o.quiet_decisions && o.gpu);
  EXPECT_EQ(o.svg_path, "out.svg");
  EXPECT_EQ(o.stick_path, "walk.stick");

  o = {};
  ASSERT_TRUE(parse({"db.mmdb", "--explain"}, o, error)) << error;
  EXPECT_TRUE(o.explain);

  EXPECT_TRUE(o.foot_locking);
  o = {};
  ASSERT_TRUE(parse({"db.mmdb", "--no-foot-locking"}, o, error)) << error;
  EXPECT_FALSE(o.foot_locking);

  o = {};
  ASSERT_TRUE(parse({"--help"}, o, error));
  EXPECT_TRUE(o.help);
}

TEST(SampleOptions, BadUsageSaysWhatIsWrong) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases{
      {{}, "no database given"},
      {{"a.mmdb", "b.mmdb"}, "one database only"},
      {{"a.mmdb", "--characters", "0"}, "--characters wants"},
      {{"a.mmdb", "--characters", "3x"}, "--characters wants"},
      {{"a.mmdb", "--seconds", "-1"}, "--seconds wants"},
      {{"a.mmdb", "--seconds", "nan"}, "--seconds wants"},
      {{"a.mmdb", "--seconds"}, "--seconds needs a value"},
      {{"a.mmdb", "--svg", ""}, "--svg wants a file name"},
      {{"a.mmdb", "--stick", ""}, "--stick wants a file name"},
      {{"a.mmdb", "--stick"}, "--stick needs a value"},
      {{"a.mmdb", "--fast"}, "unknown option '--fast'"},
      {{"a.mmdb", "--explain", "--gpu"}, "leave out --gpu"},
  };
  for (const auto& [args, message] : cases) {
    SampleOptions o;
    std::string error;
    EXPECT_FALSE(parse(args, o, error)) << message;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace mmdb::sample
