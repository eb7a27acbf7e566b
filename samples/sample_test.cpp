// Known answers for the sample's own parts: the SVG writer and the command line. The stick script
// is the runtime's, tested with it (tests/runtime/control/test_stick_script.cpp).
#include "sample_options.h"
#include "svg_plot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
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

TEST(SvgPlot, XToTheLeftMirrorsTheXAxisOnly) {
  const std::vector<PlotSeries> series{{"a", "black", {{0.0f, 0.0f}, {4.0f, 2.0f}}}};
  std::ostringstream out;
  PlotLabels labels{"t", "x", "z", false};
  labels.x_left = true;
  write_svg_plot(out, series, labels);
  const auto p = polyline_points(out.str(), 0);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_LT(p[1].first, p[0].first);    // larger x further left
  EXPECT_LT(p[1].second, p[0].second);  // larger z higher up
  EXPECT_NEAR(p[0].first - p[1].first, 2.0 * (p[0].second - p[1].second), 0.02);
}

// The attribute `name` of the element that starts at `at`, as a number (NaN when absent).
double attribute(const std::string& svg, size_t at, const std::string& name) {
  const size_t close = svg.find('>', at);
  const size_t found = svg.find(" " + name + "=\"", at);
  if (found == std::string::npos || found > close) return std::nan("");
  return std::stod(svg.substr(found + name.size() + 3));
}

// 200 jumps crowded on a few metres, as a 200-clip database gives them: the labels that are
// drawn cover no other label and no mark, stay inside the plot (so off the legend), and every
// mark keeps its label as a tooltip; the ones left out are counted under the plot.
TEST(SvgPlot, CrowdedLabelsNeverOverlapAndStayInThePlot) {
  std::vector<PlotMarker> markers;
  std::vector<glm::vec2> path;
  for (int i = 0; i < 20; ++i)
    markers.push_back({{-4.0f + 0.4f * float(i), 0.0f},
                       std::to_string(i) + " s",
                       "#1f77b4",
                       PlotMarker::Shape::Dot});
  for (int i = 0; i < 200; ++i) {  // half of them bunched on a quarter of the circle
    const float turn = i < 100 ? 0.016f * float(i) : 1.6f + 0.047f * float(i - 100);
    const glm::vec2 at(5.0f * std::cos(turn), 5.0f * std::sin(turn));
    path.push_back(at);
    markers.push_back({at, "dataset-1_walk_not-confident_00" + std::to_string(i % 7) + "#mirror",
                       "#d62728", PlotMarker::Shape::Cross});
  }
  markers.push_back({{0.0f, -3.0f}, "", "#000000", PlotMarker::Shape::Dot});  // no label
  std::ostringstream out;
  PlotLabels labels{"t", "x", "z", false};
  labels.x_left = true;
  write_svg_plot(out, {{"achieved", "#d62728", path}}, labels, markers, {"seconds", "jumps"});
  const std::string svg = out.str();

  // The plot area: the frame drawn after the grid lines.
  const size_t frame = svg.find("<rect x=");
  ASSERT_NE(frame, std::string::npos);
  const double left = attribute(svg, frame, "x"), top = attribute(svg, frame, "y");
  const double right = left + attribute(svg, frame, "width");
  const double bottom = top + attribute(svg, frame, "height");

  struct Box {
    double x0, y0, x1, y1;
  };
  std::vector<Box> labels_drawn, marks;
  size_t titles = 0;
  for (size_t at = svg.find("<g class=\"marker\">"); at != std::string::npos;
       at = svg.find("<g class=\"marker\">", at + 1)) {
    const size_t inside = at + std::string("<g class=\"marker\">").size();
    const bool titled = svg.compare(inside, 7, "<title>") == 0;
    titles += titled ? 1 : 0;
    const size_t shape = titled ? svg.find("</title>", inside) + 8 : inside;
    double x = attribute(svg, shape, "cx"), y = attribute(svg, shape, "cy");
    if (std::isnan(x)) {  // a cross: "M x-4,y-4 ..."
      const size_t d = svg.find("d=\"M", shape) + 4;
      x = std::stod(svg.substr(d)) + 4;
      y = std::stod(svg.substr(svg.find(',', d) + 1)) + 4;
    }
    marks.push_back({x - 4, y - 4, x + 4, y + 4});
  }
  EXPECT_EQ(marks.size(), markers.size());
  EXPECT_EQ(titles, markers.size() - 1);
  for (size_t at = svg.find("<text class=\"marker-label\""); at != std::string::npos;
       at = svg.find("<text class=\"marker-label\"", at + 1)) {
    const size_t begin = svg.find('>', at) + 1;
    const size_t length = svg.find("</text>", begin) - begin;
    const double width = kLabelCharWidth * double(length);
    const double x = attribute(svg, at, "x"), y = attribute(svg, at, "y");
    const bool end = svg.substr(at, begin - at).find("text-anchor=\"end\"") != std::string::npos;
    labels_drawn.push_back({end ? x - width : x, y - 9, end ? x : x + width, y + 3});
  }
  auto overlap = [](const Box& a, const Box& b) {
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
  };
  ASSERT_GT(labels_drawn.size(), 40u);  // the seconds come first and all fit
  EXPECT_LT(labels_drawn.size(), 200u);
  for (size_t i = 0; i < labels_drawn.size(); ++i) {
    const Box& a = labels_drawn[i];
    EXPECT_TRUE(a.x0 >= left && a.x1 <= right && a.y0 >= top && a.y1 <= bottom) << i;
    for (size_t j = i + 1; j < labels_drawn.size(); ++j) EXPECT_FALSE(overlap(a, labels_drawn[j]));
    for (const Box& mark : marks) EXPECT_FALSE(overlap(a, mark)) << i;
  }
  for (int i = 0; i < 20; ++i)
    EXPECT_NE(svg.find(">" + std::to_string(i) + " s</text>"), std::string::npos) << i;
  const std::string note =
      std::to_string(220 - labels_drawn.size()) + " of 220 labels are left out";
  EXPECT_NE(svg.find(note), std::string::npos) << note;
  // The legend is right of the plot.
  const size_t legend = svg.find(">seconds</text>");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_GT(attribute(svg, svg.rfind("<text", legend), "x"), right);
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

TEST(SvgPlot, AFileIsReplacedWholeAndNothingIsLeftBeside) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("svg_plot_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "plot.svg").string();
  std::string error;
  ASSERT_TRUE(write_svg_plot_file(path, {}, {"first", "x", "z", false}, error)) << error;
  ASSERT_TRUE(write_svg_plot_file(path, {}, {"second", "x", "z", false}, error)) << error;
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(">second</text>"), std::string::npos);
  EXPECT_EQ(text.find(">first</text>"), std::string::npos);
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);
  // A folder in the way: an error naming the file, and the folder untouched.
  const std::string folder = (dir / "folder.svg").string();
  std::filesystem::create_directories(dir / "folder.svg" / "inside");
  EXPECT_FALSE(write_svg_plot_file(folder, {}, {}, error));
  EXPECT_NE(error.find(folder), std::string::npos) << error;
  EXPECT_TRUE(std::filesystem::exists(dir / "folder.svg" / "inside"));
  EXPECT_FALSE(std::filesystem::exists(folder + ".partial"));
  std::filesystem::remove_all(dir);
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

  EXPECT_EQ(o.start_stagger, 0);
  o = {};
  ASSERT_TRUE(parse({"db.mmdb", "--start-stagger", "2"}, o, error)) << error;
  EXPECT_EQ(o.start_stagger, 2);

  EXPECT_LT(o.speed_limit, 0.0) << "the crowd's default";
  o = {};
  ASSERT_TRUE(parse({"db.mmdb", "--speed-limit", "0"}, o, error)) << error;
  EXPECT_EQ(o.speed_limit, 0.0);
  o = {};
  ASSERT_TRUE(parse({"db.mmdb", "--speed-limit", "1.25"}, o, error)) << error;
  EXPECT_EQ(o.speed_limit, 1.25);

  EXPECT_LT(o.sync_mode, 0) << "the crowd's default";
  for (const auto& [name, mode] : {std::pair{"none", 0}, {"character", 1}, {"controller", 2}}) {
    o = {};
    ASSERT_TRUE(parse({"db.mmdb", "--sync", name}, o, error)) << error;
    EXPECT_EQ(o.sync_mode, mode);
  }
  o = {};
  ASSERT_TRUE(parse({"db.mmdb", "--sync-distance", "0.2", "--sync-hard-distance", "0.3",
                     "--sync-angle", "45", "--rate-min", "0.5", "--rate-max", "1.5"},
                    o, error))
      << error;
  mmdb::SynchronizationSettings sync;
  apply_sync_options(o, sync);
  EXPECT_EQ(sync.max_distance, 0.2f);
  EXPECT_EQ(sync.hard_distance, 0.3f);
  EXPECT_NEAR(sync.max_angle, 0.785398f, 1e-6f);
  EXPECT_EQ(sync.rate_min, 0.5f);
  EXPECT_EQ(sync.rate_max, 1.5f);
  EXPECT_EQ(sync.mode, mmdb::Synchronization::CharacterFollows) << "unchanged";
  EXPECT_TRUE(mmdb::warpingOn(sync)) << "the crowd's default";
  EXPECT_EQ(sync.stride_min, 0.f) << "the crowd's default";
  o = {};
  ASSERT_TRUE(parse({"db.mmdb", "--stride-min", "0", "--stride-max", "1.25", "--warp-angle", "45",
                     "--warp-halflife", "0.2"},
                    o, error))
      << error;
  apply_sync_options(o, sync);
  EXPECT_EQ(sync.stride_min, 0.f);
  EXPECT_EQ(sync.stride_max, 1.25f);
  EXPECT_NEAR(sync.warp_angle, 0.785398f, 1e-6f);
  EXPECT_EQ(sync.warp_halflife, 0.2f);
  EXPECT_TRUE(mmdb::warpingOn(sync));

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
      {{"a.mmdb", "--start-stagger", "17"}, "--start-stagger wants"},
      {{"a.mmdb", "--start-stagger", "-1"}, "--start-stagger wants"},
      {{"a.mmdb", "--speed-limit", "-0.5"}, "--speed-limit wants"},
      {{"a.mmdb", "--speed-limit", "nan"}, "--speed-limit wants"},
      {{"a.mmdb", "--speed-limit"}, "--speed-limit needs a value"},
      {{"a.mmdb", "--seconds", "-1"}, "--seconds wants"},
      {{"a.mmdb", "--seconds", "nan"}, "--seconds wants"},
      {{"a.mmdb", "--seconds"}, "--seconds needs a value"},
      {{"a.mmdb", "--svg", ""}, "--svg wants a file name"},
      {{"a.mmdb", "--stick", ""}, "--stick wants a file name"},
      {{"a.mmdb", "--stick"}, "--stick needs a value"},
      {{"a.mmdb", "--fast"}, "unknown option '--fast'"},
      {{"a.mmdb", "--explain", "--gpu"}, "leave out --gpu"},
      {{"a.mmdb", "--sync", "both"}, "--sync wants character, controller or none, got 'both'"},
      {{"a.mmdb", "--sync"}, "--sync needs a value"},
      {{"a.mmdb", "--sync-halflife", "0"}, "--sync-halflife wants a number above 0"},
      {{"a.mmdb", "--sync-ratio", "-1"}, "--sync-ratio wants a number from 0"},
      {{"a.mmdb", "--sync-distance", "inf"}, "--sync-distance wants"},
      {{"a.mmdb", "--sync-angle", "200"}, "--sync-angle wants a number from 0 to 180"},
      {{"a.mmdb", "--stride-min", "1.5"}, "--stride-min wants a number from 0 to 1, got '1.5'"},
      {{"a.mmdb", "--stride-max", "0.5"}, "--stride-max wants a number from 1 to 4"},
      {{"a.mmdb", "--warp-angle", "120"}, "--warp-angle wants a number from 0 to 90"},
      {{"a.mmdb", "--warp-halflife", "0"}, "--warp-halflife wants a number above 0"},
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
