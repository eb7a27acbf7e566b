#include "review/report_data.h"

#include "review/replay.h"

#include <mmdb/search.h>

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace mmcook::review {
namespace {

constexpr float kDegrees = 3.14159265358979f / 180.f;

bool isTrajectoryBlock(mmdb::FeatureKind kind) {
  return kind == mmdb::FeatureKind::TrajectoryPosition ||
         kind == mmdb::FeatureKind::TrajectoryDirection;
}

// Bins values of one block's columns over [low, high]; `value(frame, column)` gives each.
template <typename Value>
void fillHistogram(BlockHistogram& h, uint32_t frames, uint32_t bins, Value value) {
  h.counts.assign(h.width, std::vector<uint32_t>(bins, 0));
  h.mean.assign(h.width, 0.f);
  h.deviation.assign(h.width, 0.f);
  const double span = double(h.high) - double(h.low);
  for (uint16_t c = 0; c < h.width; ++c) {
    double sum = 0, sum_sq = 0;
    for (uint32_t f = 0; f < frames; ++f) {
      const double v = value(f, uint16_t(h.first_column + c));
      sum += v;
      sum_sq += v * v;
      int64_t bin = span > 0 ? int64_t((v - h.low) / span * bins) : 0;
      bin = std::clamp<int64_t>(bin, 0, int64_t(bins) - 1);
      ++h.counts[c][size_t(bin)];
    }
    if (frames > 0) {
      const double mean = sum / frames;
      h.mean[c] = float(mean);
      h.deviation[c] = float(std::sqrt(std::max(0.0, sum_sq / frames - mean * mean)));
    }
  }
}

template <typename Value>
std::pair<float, float> blockRange(const mmdb::FeatureBlockInfo& block, uint32_t frames,
                                   Value value) {
  float low = std::numeric_limits<float>::infinity(), high = -low;
  for (uint32_t f = 0; f < frames; ++f)
    for (uint16_t c = block.first_column; c < block.first_column + block.width; ++c) {
      low = std::min(low, value(f, c));
      high = std::max(high, value(f, c));
    }
  if (!(low <= high)) low = high = 0;  // no frames
  if (low == high) {                   // one value: a bin around it
    low -= 0.5f;
    high += 0.5f;
  }
  return {low, high};
}

BlockHistogram emptyHistogram(const mmdb::FeatureBlockInfo& block) {
  BlockHistogram h;
  h.name = std::string(block.name);
  h.kind = block.kind;
  h.first_column = block.first_column;
  h.width = block.width;
  h.weight = block.weight;
  return h;
}

glm::vec3 yawed(float angle, glm::vec3 v) { return glm::angleAxis(angle, glm::vec3(0, 1, 0)) * v; }

}  // namespace

uint32_t TimelineClip::matchableFrames() const {
  uint32_t n = 0;
  for (const LocalSpan& s : matchable) n += s.frame_count;
  return n;
}

Timeline clipTimeline(const mmdb::Database& db) {
  Timeline t;
  t.frame_rate = db.frameRate();
  t.frame_count = db.frameCount();
  t.range_count = uint32_t(db.ranges().size());
  for (uint32_t bit = 0; bit < db.tagCount(); ++bit) t.tag_names.emplace_back(db.tagName(bit));
  const mmdb::Span<const mmdb::MatchRange> ranges = db.ranges();
  size_t r = 0;
  for (uint32_t i = 0; i < db.clipCount(); ++i) {
    const mmdb::ClipInfo info = db.clip(i);
    TimelineClip c;
    c.name = std::string(info.name);
    c.take = std::string(info.take);
    c.first_frame = info.first_frame;
    c.frame_count = info.frame_count;
    c.tag_mask = info.tag_mask;
    c.bias = info.bias;
    c.mirrored = info.mirrored;
    c.mirror_of = info.mirror_of;
    const uint64_t end = uint64_t(info.first_frame) + info.frame_count;
    // Ranges are sorted and each lies inside one clip (checked at open).
    while (r < ranges.size() && ranges[r].first_frame < info.first_frame) ++r;
    uint32_t cursor = 0;  // local
    for (; r < ranges.size() && ranges[r].first_frame < end; ++r) {
      const uint32_t local = ranges[r].first_frame - info.first_frame;
      if (local > cursor) c.excluded.push_back({cursor, local - cursor, 0});
      c.matchable.push_back(
          {local, ranges[r].frame_count, ranges[r].tag_mask, db.frameBias(ranges[r].first_frame)});
      cursor = std::max(cursor, local + ranges[r].frame_count);
    }
    if (cursor < info.frame_count) c.excluded.push_back({cursor, info.frame_count - cursor, 0});
    t.clips.push_back(std::move(c));
  }
  return t;
}

std::string tagList(const Timeline& timeline, uint64_t mask) {
  std::string out;
  for (uint32_t bit = 0; bit < 64; ++bit)
    if (mask & (uint64_t{1} << bit)) {
      if (!out.empty()) out += ", ";
      out +=
          bit < timeline.tag_names.size() ? timeline.tag_names[bit] : "bit" + std::to_string(bit);
    }
  return out.empty() ? "-" : out;
}

std::vector<BlockHistogram> featureHistograms(const mmdb::Database& db, uint32_t bins) {
  const auto value = [&](uint32_t f, uint16_t c) {
    return db.features()[size_t(f) * db.featureStride() + c];
  };
  std::vector<BlockHistogram> out;
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b) {
    const mmdb::FeatureBlockInfo block = db.featureBlock(b);
    BlockHistogram h = emptyHistogram(block);
    std::tie(h.low, h.high) = blockRange(block, db.frameCount(), value);
    fillHistogram(h, db.frameCount(), bins, value);
    out.push_back(std::move(h));
  }
  return out;
}

std::string featuresIncomparable(const mmdb::Database& a, const mmdb::Database& b) {
  char why[256];
  if (a.jointCount() != b.jointCount()) {
    std::snprintf(why, sizeof(why),
                  "A's skeleton has %u joints and B's %u: the same feature measures different "
                  "joints",
                  a.jointCount(), b.jointCount());
    return why;
  }
  if (a.featureCount() != b.featureCount() || a.featureBlockCount() != b.featureBlockCount()) {
    std::snprintf(why, sizeof(why), "A has %u features in %u blocks and B %u in %u",
                  unsigned(a.featureCount()), a.featureBlockCount(), unsigned(b.featureCount()),
                  b.featureBlockCount());
    return why;
  }
  for (uint32_t i = 0; i < a.featureBlockCount(); ++i) {
    const mmdb::FeatureBlockInfo x = a.featureBlock(i), y = b.featureBlock(i);
    if (x.name != y.name || x.kind != y.kind || x.width != y.width ||
        x.first_column != y.first_column || x.joint != y.joint) {
      std::snprintf(why, sizeof(why), "feature block %u is %.*s in A and %.*s in B", i,
                    int(x.name.size()), x.name.data(), int(y.name.size()), y.name.data());
      return why;
    }
  }
  // Each file's features, normalized as the other normalizes them (comparedHistograms, the
  // shared coverage pose), must be floats.
  const mmdb::Database* files[] = {&a, &b};
  for (int from = 0; from < 2; ++from) {
    const mmdb::Database& x = *files[from];
    const mmdb::Database& y = *files[1 - from];
    for (uint16_t c = 0; c < x.featureCount(); ++c)
      for (uint32_t f = 0; f < x.frameCount(); ++f) {
        const float raw = x.features()[size_t(f) * x.featureStride() + c] * x.featureScale()[c] +
                          x.featureOffset()[c];
        if (std::isfinite(raw) && std::isfinite((raw - y.featureOffset()[c]) / y.featureScale()[c]))
          continue;
        std::snprintf(why, sizeof(why),
                      "%s's feature column %u at frame %u, normalized as %s normalizes it, is not "
                      "a finite float (A: feature_offset[%u] = %g, feature_scale[%u] = %g; B: "
                      "feature_offset[%u] = %g, feature_scale[%u] = %g)",
                      from ? "B" : "A", unsigned(c), f, from ? "A" : "B", unsigned(c),
                      double(a.featureOffset()[c]), unsigned(c), double(a.featureScale()[c]),
                      unsigned(c), double(b.featureOffset()[c]), unsigned(c),
                      double(b.featureScale()[c]));
        return why;
      }
  }
  return "";
}

HistogramPair comparedHistograms(const mmdb::Database& a, const mmdb::Database& b, uint32_t bins) {
  const auto value_a = [&](uint32_t f, uint16_t c) {
    return a.features()[size_t(f) * a.featureStride() + c];
  };
  // B's raw feature, normalized as A normalizes it.
  const auto value_b = [&](uint32_t f, uint16_t c) {
    const float raw = b.features()[size_t(f) * b.featureStride() + c] * b.featureScale()[c] +
                      b.featureOffset()[c];
    return (raw - a.featureOffset()[c]) / a.featureScale()[c];
  };
  HistogramPair out;
  for (uint32_t i = 0; i < a.featureBlockCount(); ++i) {
    const mmdb::FeatureBlockInfo block = a.featureBlock(i);
    BlockHistogram ha = emptyHistogram(block), hb = emptyHistogram(b.featureBlock(i));
    const auto [low_a, high_a] = blockRange(block, a.frameCount(), value_a);
    const auto [low_b, high_b] = blockRange(block, b.frameCount(), value_b);
    ha.low = hb.low = std::min(low_a, low_b);
    ha.high = hb.high = std::max(high_a, high_b);
    fillHistogram(ha, a.frameCount(), bins, value_a);
    fillHistogram(hb, b.frameCount(), bins, value_b);
    out.a.push_back(std::move(ha));
    out.b.push_back(std::move(hb));
  }
  return out;
}

void steadyTrajectory(float speed, float direction_deg, float turn_rate_deg,
                      const mmdb::ControllerSettings& settings,
                      float trajectory[mmdb::kTrajectoryFloats]) {
  const float omega = turn_rate_deg * kDegrees;
  const glm::vec3 travel = yawed(direction_deg * kDegrees, glm::vec3(0, 0, 1)) * speed;
  mmdb::CharacterState state;
  state.velocity = travel;
  state.angular_velocity = glm::vec3(0, omega, 0);
  // Steps short enough that the turning stick is followed closely; the spring itself is exact.
  constexpr float kStep = 1.f / 120;
  float now = 0;
  for (int i = 0; i < mmdb::kTrajectorySamples; ++i) {
    while (now < settings.times[i] - 1e-6f) {
      const float dt = std::min(kStep, settings.times[i] - now);
      mmdb::StickInput stick;
      // The stick at the middle of the step: it turns with the facing.
      const float angle = omega * (now + dt / 2);
      stick.desired_velocity = yawed(angle, travel);
      stick.desired_facing = yawed(angle, glm::vec3(0, 0, 1));
      mmdb::updateCharacter(state, stick, settings, dt);
      now += dt;
    }
    // The start is the origin facing +Z, so world coordinates are the character's.
    const glm::vec3 facing = state.rotation * glm::vec3(0, 0, 1);
    trajectory[2 * i] = state.position.x;
    trajectory[2 * i + 1] = state.position.z;
    trajectory[6 + 2 * i] = facing.x;
    trajectory[6 + 2 * i + 1] = facing.z;
  }
}

CoveragePose representativePose(const mmdb::Database& db) {
  std::vector<uint16_t> pose_columns;
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b) {
    const mmdb::FeatureBlockInfo block = db.featureBlock(b);
    if (isTrajectoryBlock(block.kind)) continue;
    for (uint16_t c = 0; c < block.width; ++c) pose_columns.push_back(block.first_column + c);
  }
  CoveragePose pose;
  double best = std::numeric_limits<double>::infinity();
  for (const mmdb::MatchRange& range : db.ranges())
    for (uint32_t f = range.first_frame; f < range.first_frame + range.frame_count; ++f) {
      const mmdb::Span<const float> row = db.featureRow(f);
      double distance = 0;
      for (uint16_t c : pose_columns) distance += double(row[c]) * row[c];
      if (distance < best) {  // ties keep the lower frame
        best = distance;
        pose.frame = int32_t(f);
      }
    }
  if (pose.frame < 0) return pose;
  const int32_t clip = db.clipOfFrame(uint32_t(pose.frame));
  pose.clip = std::string(db.clip(uint32_t(clip)).name);
  pose.local_frame = uint32_t(pose.frame) - db.clip(uint32_t(clip)).first_frame;
  const mmdb::Float4 v = db.rootMotion()[size_t(pose.frame)].velocity;
  pose.root_speed = std::sqrt(v.x * v.x + v.z * v.z);
  pose.raw.resize(db.featureCount());
  const mmdb::Status status =
      mmdb::denormalizeQuery(db, db.featureRow(uint32_t(pose.frame)), pose.raw);
  if (!status) throw std::runtime_error(status.message());
  return pose;
}

std::vector<size_t> CoverageMap::worst() const {
  std::vector<size_t> order;
  for (size_t i = 0; i < cells.size(); ++i)
    if (cells[i].speed > 0 || i % settings.directions == 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return cells[x].cost > cells[y].cost; });
  if (order.size() > settings.worst_count) order.resize(settings.worst_count);
  return order;
}

CoverageMap coverageMap(const mmdb::Database& db, const CoveragePose& pose,
                        const CoverageSettings& settings) {
  CoverageMap map;
  map.settings = settings;
  map.pose = pose;
  mmdb::ControllerSettings controller;
  for (int i = 0; i < mmdb::kTrajectorySamples && i < int(db.trajectoryTimes().size()); ++i)
    controller.times[i] = db.trajectoryTimes()[size_t(i)];

  const size_t width = db.featureCount();
  std::vector<float> normalized_pose(width);
  if (pose.raw.size() != width) throw std::runtime_error("the coverage pose has another width");
  mmdb::Status status = mmdb::normalizeQuery(db, pose.raw, normalized_pose);
  if (!status) throw std::runtime_error(status.message());
  std::vector<bool> trajectory_column(width, false);
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b) {
    const mmdb::FeatureBlockInfo block = db.featureBlock(b);
    if (isTrajectoryBlock(block.kind))
      for (uint16_t c = 0; c < block.width; ++c) trajectory_column[block.first_column + c] = true;
  }

  for (float turn : settings.turn_rates)
    for (float speed : settings.speeds)
      for (uint32_t d = 0; d < settings.directions; ++d)
        map.cells.push_back({speed, 360.f * float(d) / float(settings.directions), turn,
                             std::numeric_limits<float>::infinity(), -1,
                             std::numeric_limits<float>::infinity(), -1});
  std::vector<float> queries(map.cells.size() * width);
  std::vector<mmdb::SearchRequest> requests(map.cells.size());
  for (size_t i = 0; i < map.cells.size(); ++i) {
    float trajectory[mmdb::kTrajectoryFloats];
    steadyTrajectory(map.cells[i].speed, map.cells[i].direction_deg, map.cells[i].turn_rate_deg,
                     controller, trajectory);
    const mmdb::Span<float> query(queries.data() + i * width, width);
    status = mmdb::buildQuery(db, -1, trajectory, query);
    if (!status) throw std::runtime_error(status.message());
    for (size_t c = 0; c < width; ++c)
      if (!trajectory_column[c]) query[c] = normalized_pose[c];
    for (size_t c = 0; c < width; ++c)
      if (!std::isfinite(query[c])) {
        char why[320];
        std::snprintf(why, sizeof(why),
                      "the query of %g m/s %s, %s is not finite at feature column %zu in this "
                      "file's normalization (feature_offset[%zu] = %g, feature_scale[%zu] = %g)",
                      double(map.cells[i].speed), directionName(map.cells[i].direction_deg).c_str(),
                      turnName(map.cells[i].turn_rate_deg).c_str(), c, c,
                      double(db.featureOffset()[c]), c, double(db.featureScale()[c]));
        map.error = why;
        return map;
      }
    requests[i].query = query;
  }
  std::vector<mmdb::SearchResult> results(requests.size());
  status = mmdb::searchBatch(db, requests, results);
  // NoMatch: nothing matchable; those cells keep frame -1 and cost +inf.
  if (!status && status.code() != mmdb::ErrorCode::NoMatch)
    throw std::runtime_error(status.message());
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].frame >= 0) {
      map.cells[i].frame = results[i].frame;
      map.cells[i].cost = results[i].cost;
    }
  // The unit-weight answer: a block's normalized columns carry its cooked weight, so a run-time
  // weight of 1 / cooked weighs every block 1 (a block of weight 0 holds zeros: any weight).
  std::vector<float> unit(db.featureBlockCount(), 1.f);
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b) {
    const float w = db.featureBlock(b).weight;
    if (w > 0.f && std::isfinite(1.f / w)) unit[b] = 1.f / w;
  }
  for (mmdb::SearchRequest& r : requests)
    r.block_weights = mmdb::Span<const float>(unit.data(), unit.size());
  std::vector<mmdb::SearchResult> unit_results(requests.size());
  status = mmdb::searchBatch(db, requests, unit_results);
  if (!status && status.code() != mmdb::ErrorCode::NoMatch)
    throw std::runtime_error(status.message());
  for (size_t i = 0; i < unit_results.size(); ++i)
    if (unit_results[i].frame >= 0) {
      map.cells[i].unit_frame = unit_results[i].frame;
      map.cells[i].unit_distance =
          float(unitWeightDistance(db, requests[i], unit_results[i].frame));
    }
  return map;
}

std::string directionName(float direction_deg) {
  static const char* const kNames[] = {"forward",  "forward-left", "left",  "back-left",
                                       "backward", "back-right",   "right", "forward-right"};
  const float wrapped = std::fmod(std::fmod(direction_deg, 360.f) + 360.f, 360.f);
  const int octant = int(std::lround(wrapped / 45.f)) % 8;
  char text[64];
  if (std::fabs(wrapped - octant * 45.f) < 0.5f) return kNames[octant];
  std::snprintf(text, sizeof(text), "%.0f deg from forward", double(wrapped));
  return text;
}

std::string turnName(float turn_rate_deg) {
  char text[64];
  if (turn_rate_deg == 0) return "not turning";
  std::snprintf(text, sizeof(text), "turning %s %.0f deg/s", turn_rate_deg > 0 ? "left" : "right",
                double(std::fabs(turn_rate_deg)));
  return text;
}

}  // namespace mmcook::review
