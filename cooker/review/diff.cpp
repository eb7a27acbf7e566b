#include "review/diff.h"

#include <mmdb/mmdb_generated.h>
#include <mmdb/search.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace mmcook::review {
namespace {

namespace fb = mmdb::fb;

constexpr size_t kMaxSkeletonLines = 10;  // joints that differ, listed before "and N more"

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

template <typename T>
uint32_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

std::string format(const char* fmt, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

std::string tagList(const mmdb::Database& db, uint64_t mask) {
  std::string out;
  for (uint32_t bit = 0; bit < 64; ++bit)
    if (mask & (uint64_t{1} << bit)) {
      const std::string_view name = db.tagName(bit);
      out += (out.empty() ? "" : ", ") +
             (name.empty() ? "bit" + std::to_string(bit) : std::string(name));
    }
  return out.empty() ? "-" : out;
}

std::string roleName(fb::Role role) {
  const char* names[] = {"hips",      "left_foot",     "right_foot", "left_toe",
                         "right_toe", "root_position", "facing"};
  const size_t i = size_t(role);
  return i < std::size(names) ? names[i] : "role" + std::to_string(i);
}

void compareSettings(const mmdb::Database& a, const mmdb::Database& b, StructureDiff& out) {
  const fb::CookSettings& sa = *a.flatbuffer()->settings();
  const fb::CookSettings& sb = *b.flatbuffer()->settings();
  const auto number = [&](const char* name, double va, double vb) {
    if (!(va == vb)) out.settings.push_back({name, va, vb});
  };
  number("frame_rate", a.frameRate(), b.frameRate());
  number("unit_scale", sa.unit_scale(), sb.unit_scale());
  number("root_position_window", sa.root_position_window(), sb.root_position_window());
  number("facing_window", sa.facing_window(), sb.facing_window());
  number("savitzky_golay_order", sa.savitzky_golay_order(), sb.savitzky_golay_order());
  number("contact_speed_threshold", sa.contact_speed_threshold(), sb.contact_speed_threshold());
  number("contact_median_frames", sa.contact_median_frames(), sb.contact_median_frames());
  number("trailing_unmatchable_frames", sa.trailing_unmatchable_frames(),
         sb.trailing_unmatchable_frames());
  const mmdb::Span<const float> ta = a.trajectoryTimes(), tb = b.trajectoryTimes();
  for (size_t i = 0; i < std::max(ta.size(), tb.size()); ++i) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double va = i < ta.size() ? ta[i] : nan, vb = i < tb.size() ? tb[i] : nan;
    if (!(va == vb))
      out.settings.push_back({"trajectory_times[" + std::to_string(i) + "]", va, vb});
  }
  // Feature weights, by block name, in A's block order then B's.
  std::map<std::string, std::pair<double, double>> weights;
  std::vector<std::string> order;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // By side, not by address: a file compared with itself has both sides.
  for (const bool side_b : {false, true}) {
    const mmdb::Database* db = side_b ? &b : &a;
    for (uint32_t i = 0; i < db->featureBlockCount(); ++i) {
      const mmdb::FeatureBlockInfo block = db->featureBlock(i);
      const std::string name(block.name);
      if (!weights.count(name)) {
        weights[name] = {nan, nan};
        order.push_back(name);
      }
      (side_b ? weights[name].second : weights[name].first) = block.weight;
    }
  }
  for (const std::string& name : order) {
    const auto [wa, wb] = weights[name];
    if (!(wa == wb) && !(std::isnan(wa) && std::isnan(wb)))
      out.settings.push_back({"weight." + name, wa, wb});
  }
  number("feature_count", a.featureCount(), b.featureCount());
  number("joint_count", a.jointCount(), b.jointCount());
}

void compareSkeleton(const mmdb::Database& a, const mmdb::Database& b, StructureDiff& out) {
  std::vector<std::string> lines;
  const uint32_t joints = std::min(a.jointCount(), b.jointCount());
  for (uint32_t j = 0; j < joints; ++j) {
    if (a.jointName(j) != b.jointName(j))
      lines.push_back(format("joint %u: %.*s -> %.*s", j, int(a.jointName(j).size()),
                             a.jointName(j).data(), int(b.jointName(j).size()),
                             b.jointName(j).data()));
    else if (a.parents()[j] != b.parents()[j])
      lines.push_back(format("joint %u (%.*s): parent %d -> %d", j, int(a.jointName(j).size()),
                             a.jointName(j).data(), a.parents()[j], b.parents()[j]));
  }
  for (uint32_t j = joints; j < std::max(a.jointCount(), b.jointCount()); ++j) {
    const bool in_a = j < a.jointCount();
    const std::string_view name = in_a ? a.jointName(j) : b.jointName(j);
    lines.push_back(
        format("joint %u: %.*s only in %s", j, int(name.size()), name.data(), in_a ? "A" : "B"));
  }
  for (int r = 0; r <= int(mmdb::Role::Facing); ++r) {
    const int32_t ja = a.roleJoint(mmdb::Role(r)), jb = b.roleJoint(mmdb::Role(r));
    const std::string na = ja >= 0 ? std::string(a.jointName(uint32_t(ja))) : "-";
    const std::string nb = jb >= 0 ? std::string(b.jointName(uint32_t(jb))) : "-";
    if (na != nb) lines.push_back("role " + roleName(fb::Role(r)) + ": " + na + " -> " + nb);
  }
  if (lines.size() > kMaxSkeletonLines) {
    const size_t more = lines.size() - kMaxSkeletonLines;
    lines.resize(kMaxSkeletonLines);
    lines.push_back("and " + std::to_string(more) + " more");
  }
  out.skeleton = std::move(lines);
}

void compareBlocks(const mmdb::Database& a, const mmdb::Database& b, StructureDiff& out) {
  const auto find = [](const mmdb::Database& db, std::string_view name) -> int32_t {
    for (uint32_t i = 0; i < db.featureBlockCount(); ++i)
      if (db.featureBlock(i).name == name) return int32_t(i);
    return -1;
  };
  for (uint32_t i = 0; i < a.featureBlockCount(); ++i) {
    const mmdb::FeatureBlockInfo ba = a.featureBlock(i);
    const int32_t j = find(b, ba.name);
    BlockChange change{std::string(ba.name), true, j >= 0, ba.weight, 0.0, ba.std, 0.0};
    if (j >= 0) {
      const mmdb::FeatureBlockInfo bb = b.featureBlock(uint32_t(j));
      change.weight_b = bb.weight;
      change.std_b = bb.std;
      if (ba.std == bb.std) continue;
    }
    out.blocks.push_back(change);
  }
  for (uint32_t i = 0; i < b.featureBlockCount(); ++i) {
    const mmdb::FeatureBlockInfo bb = b.featureBlock(i);
    if (find(a, bb.name) < 0)
      out.blocks.push_back({std::string(bb.name), false, true, 0.0, bb.weight, 0.0, bb.std});
  }
}

// The clip's matchable ranges, clip-local, with their tags.
std::vector<std::string> localRanges(const mmdb::Database& db, const mmdb::ClipInfo& clip) {
  std::vector<std::string> out;
  for (const mmdb::MatchRange& r : db.ranges()) {
    if (r.first_frame < clip.first_frame || r.first_frame >= clip.first_frame + clip.frame_count)
      continue;
    const uint32_t first = r.first_frame - clip.first_frame;
    out.push_back(
        format("%u..%u [%s]", first, first + r.frame_count - 1, tagList(db, r.tag_mask).c_str()));
  }
  return out;
}

void compareClips(const mmdb::Database& a, const mmdb::Database& b, StructureDiff& out) {
  const fb::Database& fa = *a.flatbuffer();
  const fb::Database& fb_ = *b.flatbuffer();
  const auto source = [](const fb::Database& f, int32_t index) -> const fb::Source* {
    return index >= 0 && uint32_t(index) < count(f.sources()) ? f.sources()->Get(uint32_t(index))
                                                              : nullptr;
  };
  const auto mirrorName = [](const mmdb::Database& db, const mmdb::ClipInfo& c) {
    return c.mirror_of >= 0 ? std::string(db.clip(uint32_t(c.mirror_of)).name) : "-";
  };
  for (uint32_t i = 0; i < a.clipCount(); ++i) {
    const mmdb::ClipInfo ca = a.clip(i);
    const int32_t j = b.findClip(ca.name);
    if (j < 0) {
      out.clips_removed.emplace_back(ca.name);
      continue;
    }
    const mmdb::ClipInfo cb = b.clip(uint32_t(j));
    const fb::Clip& ra = *fa.clips()->Get(i);
    const fb::Clip& rb = *fb_.clips()->Get(uint32_t(j));
    ClipChange change{std::string(ca.name), {}};
    const auto differs = [&](const std::string& what, const std::string& va,
                             const std::string& vb) {
      if (va != vb) change.changes.push_back(what + " " + va + " -> " + vb);
    };
    const fb::Source* sa = source(fa, ca.source_index);
    const fb::Source* sb = source(fb_, cb.source_index);
    differs("source", sa ? str(sa->path()) : "-", sb ? str(sb->path()) : "-");
    differs("source content hash",
            sa ? format("%016" PRIx64, sa->content_hash()) : std::string("-"),
            sb ? format("%016" PRIx64, sb->content_hash()) : std::string("-"));
    differs("take", "'" + std::string(ca.take) + "'", "'" + std::string(cb.take) + "'");
    const auto sourceFrames = [](const fb::Clip& c) {
      return c.source_frame_count() == 0
                 ? std::string("none")
                 : format("%u..%u", c.source_first_frame(),
                          c.source_first_frame() + c.source_frame_count() - 1);
    };
    differs("source frames", sourceFrames(ra), sourceFrames(rb));
    differs("source frame rate", format("%g Hz", ca.source_frame_rate),
            format("%g Hz", cb.source_frame_rate));
    differs("frames", std::to_string(ca.frame_count), std::to_string(cb.frame_count));
    differs("mirror of", mirrorName(a, ca), mirrorName(b, cb));
    differs("tags", tagList(a, ca.tag_mask), tagList(b, cb.tag_mask));
    if (!change.changes.empty()) out.clips_changed.push_back(std::move(change));

    ClipRanges ranges{std::string(ca.name), localRanges(a, ca), localRanges(b, cb)};
    if (ranges.a != ranges.b) out.ranges.push_back(std::move(ranges));
  }
  for (uint32_t j = 0; j < b.clipCount(); ++j)
    if (a.findClip(b.clip(j).name) < 0) out.clips_added.emplace_back(b.clip(j).name);
}

void compareTags(const mmdb::Database& a, const mmdb::Database& b, StructureDiff& out) {
  std::set<std::string> ta, tb;
  for (uint32_t i = 0; i < a.tagCount(); ++i) ta.emplace(a.tagName(i));
  for (uint32_t i = 0; i < b.tagCount(); ++i) tb.emplace(b.tagName(i));
  for (const std::string& t : tb)
    if (!ta.count(t)) out.tags_added.push_back(t);
  for (const std::string& t : ta)
    if (!tb.count(t)) out.tags_removed.push_back(t);
}

uint64_t matchableFrames(const mmdb::Database& db) {
  uint64_t frames = 0;
  for (const mmdb::MatchRange& r : db.ranges()) frames += r.frame_count;
  return frames;
}

// A frame of `db` as (clip name, clip-local frame); ("", -1) for none.
std::pair<std::string, int32_t> clipFrame(const mmdb::Database& db, int32_t frame) {
  if (frame < 0) return {std::string(), -1};
  const int32_t clip = db.clipOfFrame(uint32_t(frame));
  if (clip < 0) return {std::string(), -1};
  const mmdb::ClipInfo info = db.clip(uint32_t(clip));
  return {std::string(info.name), frame - int32_t(info.first_frame)};
}

// The cost of global `frame` for `query`, block by block (the search's sum, each block its own
// accumulator) and whole (one accumulator over every column, as the search sums it).
float frameCost(const mmdb::Database& db, mmdb::Span<const float> query, uint32_t frame,
                std::vector<float>& blocks) {
  const mmdb::Span<const float> row = db.featureRow(frame);
  blocks.assign(db.featureBlockCount(), 0.0f);
  for (uint32_t i = 0; i < db.featureBlockCount(); ++i) {
    const mmdb::FeatureBlockInfo block = db.featureBlock(i);
    for (uint32_t c = block.first_column; c < uint32_t(block.first_column) + block.width; ++c) {
      const float d = query[c] - row[c];
      blocks[i] += d * d;
    }
  }
  float total = 0.0f;
  for (size_t c = 0; c < query.size(); ++c) {
    const float d = query[c] - row[c];
    total += d * d;
  }
  return total;
}

mmdb::Status describeSide(const mmdb::Database& db, const ReplayDecision& d,
                          const std::pair<std::string, int32_t>& other_winner, DecisionSide& side) {
  side.searched = true;
  side.reason = d.reason;
  std::tie(side.playing_clip, side.playing_local) = clipFrame(db, d.playing_frame);
  std::tie(side.winner_clip, side.winner_local) = clipFrame(db, d.frame);
  side.winner_global = d.frame;
  side.cost = d.cost;

  // The search as the crowd made it (its frame to start from or skip around, its transition cost
  // and range end margin).
  mmdb::SearchRequest request;
  request.query = mmdb::Span<const float>(d.query.data(), d.query.size());
  request.current_frame = d.request_current;
  request.seeded = d.seeded;
  request.transition_cost = d.transition_cost;
  request.range_end_margin = d.range_end_margin;
  mmdb::CandidateCost best;
  const mmdb::Result<uint32_t> n =
      mmdb::explainCandidates(db, request, mmdb::Span<mmdb::CandidateCost>(&best, 1));
  if (!n) return n.error();
  side.block_costs.assign(best.block_costs, best.block_costs + best.block_count);
  side.transition = best.transition;
  side.bias = best.bias;

  const int32_t clip = other_winner.first.empty() ? -1 : db.findClip(other_winner.first);
  if (clip >= 0 && other_winner.second >= 0 &&
      uint32_t(other_winner.second) < db.clip(uint32_t(clip)).frame_count) {
    const uint32_t frame = db.clip(uint32_t(clip)).first_frame + uint32_t(other_winner.second);
    side.other_found = true;
    side.other_cost = frameCost(db, request.query, frame, side.other_block_costs);
    if (int64_t(frame) != int64_t(d.playing_frame) || !d.seeded) {
      side.other_transition = d.transition_cost;
      side.other_cost += d.transition_cost;
    }
    for (const mmdb::MatchRange& r : db.ranges())
      side.other_matchable =
          side.other_matchable || (frame >= r.first_frame && frame < r.first_frame + r.frame_count);
  }
  return {};
}

bool sameDecision(const mmdb::Database& db_a, const ReplayDecision& a, const mmdb::Database& db_b,
                  const ReplayDecision& b) {
  return a.step == b.step && a.reason == b.reason &&
         clipFrame(db_a, a.frame) == clipFrame(db_b, b.frame) &&
         clipFrame(db_a, a.playing_frame) == clipFrame(db_b, b.playing_frame);
}

double perSecond(const mmdb::MotionMeasures& m, uint64_t n) {
  return m.character_seconds > 0 ? double(n) / m.character_seconds : 0.0;
}
double switchesFor(const mmdb::MotionMeasures& m, mmdb::SearchReason reason) {
  return perSecond(m, m.switches_by_reason[size_t(reason)]);
}
template <typename T>
double larger(const std::array<T, 2>& both) {
  return double(std::max(both[mmdb::kAtSwitch], both[mmdb::kElsewhere]));
}

}  // namespace

bool StructureDiff::changed() const { return changeCount() > 0; }

size_t StructureDiff::changeCount() const {
  return settings.size() + skeleton.size() + blocks.size() + clips_added.size() +
         clips_removed.size() + clips_changed.size() + ranges.size() + tags_added.size() +
         tags_removed.size();
}

StructureDiff compareStructure(const mmdb::Database& a, const mmdb::Database& b) {
  StructureDiff out;
  out.cooker_a = std::string(a.cookerVersion());
  out.cooker_b = std::string(b.cookerVersion());
  out.joints_a = a.jointCount();
  out.joints_b = b.jointCount();
  out.frames_a = a.frameCount();
  out.frames_b = b.frameCount();
  out.clips_a = a.clipCount();
  out.clips_b = b.clipCount();
  out.matchable_a = matchableFrames(a);
  out.matchable_b = matchableFrames(b);
  out.ranges_a = uint32_t(a.ranges().size());
  out.ranges_b = uint32_t(b.ranges().size());
  compareSettings(a, b, out);
  compareSkeleton(a, b, out);
  compareBlocks(a, b, out);
  compareClips(a, b, out);
  compareTags(a, b, out);
  return out;
}

mmdb::Result<ReplayDiff> compareReplays(const mmdb::Database& db_a, const Replay& a,
                                        const mmdb::Database& db_b, const Replay& b,
                                        size_t listed) {
  ReplayDiff out;
  out.a = a.stats;
  out.b = b.stats;
  out.steps = a.stats.steps;
  for (uint32_t i = 0; i < db_a.featureBlockCount(); ++i)
    out.blocks_a.emplace_back(db_a.featureBlock(i).name);
  for (uint32_t i = 0; i < db_b.featureBlockCount(); ++i)
    out.blocks_b.emplace_back(db_b.featureBlock(i).name);

  // Clip usage, by name: A's clips in order, then those only B has.
  uint64_t played_a = 0, played_b = 0;
  for (const uint64_t f : a.stats.clip_frames) played_a += f;
  for (const uint64_t f : b.stats.clip_frames) played_b += f;
  for (uint32_t i = 0; i < db_a.clipCount(); ++i) {
    ClipUsage usage;
    usage.name = std::string(db_a.clip(i).name);
    usage.frames_a = i < a.stats.clip_frames.size() ? a.stats.clip_frames[i] : 0;
    const int32_t j = db_b.findClip(usage.name);
    usage.in_b = j >= 0;
    if (j >= 0 && size_t(j) < b.stats.clip_frames.size())
      usage.frames_b = b.stats.clip_frames[size_t(j)];
    out.clips.push_back(usage);
  }
  for (uint32_t j = 0; j < db_b.clipCount(); ++j) {
    if (db_a.findClip(db_b.clip(j).name) >= 0) continue;
    ClipUsage usage;
    usage.name = std::string(db_b.clip(j).name);
    usage.in_a = false;
    usage.frames_b = j < b.stats.clip_frames.size() ? b.stats.clip_frames[j] : 0;
    out.clips.push_back(usage);
  }
  for (ClipUsage& usage : out.clips) {
    usage.share_a = played_a ? double(usage.frames_a) / double(played_a) : 0.0;
    usage.share_b = played_b ? double(usage.frames_b) / double(played_b) : 0.0;
  }
  std::stable_sort(out.clips.begin(), out.clips.end(), [](const ClipUsage& x, const ClipUsage& y) {
    return std::abs(x.share_b - x.share_a) > std::abs(y.share_b - y.share_a);
  });

  // Each character's decisions side by side, in order, until the first that differs.
  uint32_t characters = 0;
  for (const ReplayDecision& d : a.decisions) characters = std::max(characters, d.character + 1);
  for (const ReplayDecision& d : b.decisions) characters = std::max(characters, d.character + 1);
  std::vector<std::vector<const ReplayDecision*>> per_a(characters), per_b(characters);
  for (const ReplayDecision& d : a.decisions) per_a[d.character].push_back(&d);
  for (const ReplayDecision& d : b.decisions) per_b[d.character].push_back(&d);
  std::vector<DecisionDifference> differences;
  for (uint32_t c = 0; c < characters; ++c) {
    const std::vector<const ReplayDecision*>& da = per_a[c];
    const std::vector<const ReplayDecision*>& db = per_b[c];
    size_t i = 0;
    while (i < da.size() && i < db.size() && sameDecision(db_a, *da[i], db_b, *db[i])) ++i;
    if (i == da.size() && i == db.size()) continue;
    ++out.characters_differing;
    const ReplayDecision* x = i < da.size() ? da[i] : nullptr;
    const ReplayDecision* y = i < db.size() ? db[i] : nullptr;
    // The earlier search is the difference; a file whose search came later did not search then.
    if (x && y && x->step != y->step) (x->step < y->step ? y : x) = nullptr;
    DecisionDifference diff;
    diff.step = x ? x->step : y->step;
    diff.time = double(diff.step) * kReplayStepSeconds;
    diff.character = c;
    const auto winner = [](const mmdb::Database& db, const ReplayDecision* d) {
      return d ? clipFrame(db, d->frame) : std::pair<std::string, int32_t>{std::string(), -1};
    };
    if (x)
      if (mmdb::Status s = describeSide(db_a, *x, winner(db_b, y), diff.a); !s) return s;
    if (y)
      if (mmdb::Status s = describeSide(db_b, *y, winner(db_a, x), diff.b); !s) return s;
    differences.push_back(std::move(diff));
  }
  std::stable_sort(
      differences.begin(), differences.end(),
      [](const DecisionDifference& x, const DecisionDifference& y) { return x.step < y.step; });
  if (differences.size() > listed) differences.resize(listed);
  out.first_differences = std::move(differences);
  return out;
}

MeasureChange measureChange(double a, double b) {
  MeasureChange c;
  c.absolute = b - a;
  c.has_relative = a != 0.0 && std::isfinite(a);
  c.relative = c.has_relative ? (b - a) / std::abs(a) : 0.0;
  return c;
}

std::string changeText(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return "-";
  const MeasureChange c = measureChange(a, b);
  if (c.has_relative) return format("%+.1f%%", 100.0 * c.relative);
  if (b == a) return "0";
  return format("new (%+.4g)", c.absolute);
}

bool measureMoved(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) != std::isnan(b);
  const double scale = std::max(std::abs(a), std::abs(b));
  return std::abs(b - a) > std::max(1e-6 * scale, 1e-12);
}

const std::vector<MotionKey>& motionKeys() {
  // Grouped as docs/review.md "Data checks" lists them.
  static const std::vector<MotionKey> keys = {
      {"foot-slide-p50", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return m.planted_slide_mm.p50; }},
      {"foot-slide-p90", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return m.planted_slide_mm.p90; }},
      {"foot-slide-max", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return m.planted_slide_mm.max; }},
      {"phase-drift-p50", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return m.phase_drift_mm.p50; }},
      {"phase-drift-p90", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return m.phase_drift_mm.p90; }},
      {"phase-drift-max", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return m.phase_drift_mm.max; }},
      {"phase-drift-share", MeasureUnit::Percent,
       [](const mmdb::MotionMeasures& m) { return 100.0 * m.phase_share_over_limit; }},
      {"pose-step-ratio", MeasureUnit::Ratio,
       [](const mmdb::MotionMeasures& m) { return larger(m.max_step_ratio); }},
      {"pose-step-ratio-at-switch", MeasureUnit::Ratio,
       [](const mmdb::MotionMeasures& m) { return m.max_step_ratio[mmdb::kAtSwitch]; }},
      {"pose-step-ratio-elsewhere", MeasureUnit::Ratio,
       [](const mmdb::MotionMeasures& m) { return m.max_step_ratio[mmdb::kElsewhere]; }},
      {"pose-step-max", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return larger(m.max_joint_step_mm); }},
      {"pose-step-max-at-switch", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return m.max_joint_step_mm[mmdb::kAtSwitch]; }},
      {"pose-step-max-elsewhere", MeasureUnit::Mm,
       [](const mmdb::MotionMeasures& m) { return m.max_joint_step_mm[mmdb::kElsewhere]; }},
      {"acceleration-max", MeasureUnit::Acceleration,
       [](const mmdb::MotionMeasures& m) { return larger(m.max_acceleration); }},
      {"acceleration-max-at-switch", MeasureUnit::Acceleration,
       [](const mmdb::MotionMeasures& m) { return m.max_acceleration[mmdb::kAtSwitch]; }},
      {"acceleration-max-elsewhere", MeasureUnit::Acceleration,
       [](const mmdb::MotionMeasures& m) { return m.max_acceleration[mmdb::kElsewhere]; }},
      {"switch-rate", MeasureUnit::PerSecond,
       [](const mmdb::MotionMeasures& m) { return m.switch_rate; }},
      {"switch-rate-range-end", MeasureUnit::PerSecond,
       [](const mmdb::MotionMeasures& m) { return switchesFor(m, mmdb::SearchReason::RangeEnd); }},
      {"switch-rate-stick-changed", MeasureUnit::PerSecond,
       [](const mmdb::MotionMeasures& m) { return switchesFor(m, mmdb::SearchReason::Forced); }},
      {"switch-rate-periodic", MeasureUnit::PerSecond,
       [](const mmdb::MotionMeasures& m) { return switchesFor(m, mmdb::SearchReason::Periodic); }},
      {"continuation-rate", MeasureUnit::PerSecond,
       [](const mmdb::MotionMeasures& m) { return perSecond(m, m.continuations); }},
      {"hold-rate", MeasureUnit::PerSecond,
       [](const mmdb::MotionMeasures& m) { return perSecond(m, m.held); }},
      {"trajectory-error-mean", MeasureUnit::M,
       [](const mmdb::MotionMeasures& m) { return m.trajectory_error_m.mean; }},
      {"trajectory-error-p95", MeasureUnit::M,
       [](const mmdb::MotionMeasures& m) { return m.trajectory_error_m.p95; }},
      {"controller-distance-p50", MeasureUnit::M,
       [](const mmdb::MotionMeasures& m) { return m.controller_distance_m.p50; }},
      {"controller-distance-p95", MeasureUnit::M,
       [](const mmdb::MotionMeasures& m) { return m.controller_distance_m.p95; }},
      {"controller-distance-max", MeasureUnit::M,
       [](const mmdb::MotionMeasures& m) { return m.controller_distance_m.max; }},
      {"adjustment-rate", MeasureUnit::Speed,
       [](const mmdb::MotionMeasures& m) { return m.adjustment_m_per_s; }},
      {"adjustment-turn-rate", MeasureUnit::TurnRate,
       [](const mmdb::MotionMeasures& m) { return m.adjustment_deg_per_s; }},
      {"response-p50", MeasureUnit::S,
       [](const mmdb::MotionMeasures& m) { return m.response_s.p50; }},
      {"response-p90", MeasureUnit::S,
       [](const mmdb::MotionMeasures& m) { return m.response_s.p90; }},
      {"response-max", MeasureUnit::S,
       [](const mmdb::MotionMeasures& m) { return m.response_s.max; }},
      {"responses-missed", MeasureUnit::Count,
       [](const mmdb::MotionMeasures& m) { return double(m.responses_missed); }},
  };
  return keys;
}

}  // namespace mmcook::review
