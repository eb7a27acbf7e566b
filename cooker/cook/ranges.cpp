#include "cook/ranges.h"

#include "core/errors.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace mmdb::cook {
namespace {

int tagBit(const std::string& tag, const std::string& clip, std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == tag) return static_cast<int>(i);
  if (names.size() == 64)
    throw InputError("clip " + clip + ": tag '" + tag +
                     "' would be the 65th distinct tag; a database holds at most 64: merge tags");
  names.push_back(tag);
  return static_cast<int>(names.size()) - 1;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

// "clip walk: range seconds [5, 9] ends at 9 s, past the clip's end at 6.5 s ...": in the
// manifest's terms (seconds or frames).
std::string outsideClipMessage(const ClipTagging& clip, const SubRangeSpec& r, int n) {
  const std::string where = "clip " + clip.name + ": ";
  const bool seconds = r.first_seconds >= 0 && clip.frame_rate > 0;
  if (seconds) {
    const double length = double(n) / clip.frame_rate;
    const std::string range = "range seconds [" + number(r.first_seconds) + ", " +
                              (r.to_end ? std::string("\"end\"") : number(r.end_seconds)) + "]";
    if (r.to_end || r.first_frame >= n)
      return where + range + " starts at or past the clip's end at " + number(length) + " s (" +
             std::to_string(n) + " frames at " + number(clip.frame_rate) + " Hz); start it earlier";
    return where + range + " ends past the clip's end at " + number(length) + " s (" +
           std::to_string(n) + " frames at " + number(clip.frame_rate) + " Hz); end it by " +
           number(length) + " or write seconds = [" + number(r.first_seconds) + ", \"end\"]";
  }
  const std::string range =
      "range frames [" + std::to_string(r.first_frame) + ", " +
      (r.to_end ? std::string("\"end\"") : std::to_string(r.first_frame + r.frame_count)) + ")";
  if (r.to_end || r.first_frame >= n)
    return where + range + " starts at or past the clip's end, its " + std::to_string(n) +
           " frames (clip-local, at the database rate); start it earlier";
  return where + range + " does not lie inside the clip's " + std::to_string(n) +
         " frames (clip-local, at the database rate); end it by " + std::to_string(n) +
         " or write frames = [" + std::to_string(r.first_frame) + ", \"end\"]";
}

// The same at the range's line ("loco.toml:14: clip walk: range seconds ...").
InputError outsideClip(const ClipTagging& clip, const SubRangeSpec& r, int n) {
  const std::string message = outsideClipMessage(clip, r, n);
  if (!clip.manifest.empty() && r.manifest_line > 0)
    return InputError(clip.manifest, r.manifest_line, message);
  return InputError(message);
}

// A database whose every frame is left out: the search could never start a clip, so no runtime
// use is left. Says which settings cut the frames out: the trailing frames, the excluded ranges
// (their manifest lines, the first few), or both.
std::string nothingMatchable(const std::vector<ClipTagging>& clips, int trailing_unmatchable) {
  const ClipTagging* longest = &clips.front();
  std::vector<std::string> excluding;  // "loco.toml:14" or "clip walk"
  size_t excluded_ranges = 0;
  for (const ClipTagging& clip : clips) {
    if (clip.frame_count > longest->frame_count) longest = &clip;
    for (const SubRangeSpec& r : clip.ranges) {
      if (!r.exclude) continue;
      ++excluded_ranges;
      if (excluding.size() == 3) continue;
      excluding.push_back(!clip.manifest.empty() && r.manifest_line > 0
                              ? clip.manifest + ":" + std::to_string(r.manifest_line)
                              : "clip " + clip.name);
    }
  }
  std::string where;
  for (size_t i = 0; i < excluding.size(); ++i) where += (i ? ", " : "") + excluding[i];
  if (excluded_ranges > excluding.size()) where += ", ...";
  const std::string clips_text =
      clips.size() == 1 ? "the only clip" : "all " + std::to_string(clips.size()) + " clips";
  const double rate = clips.front().frame_rate;
  const std::string trailing =
      "the last " + std::to_string(trailing_unmatchable) + " frames" +
      (rate > 0 ? " (" + number(trailing_unmatchable / rate) + " s)" : std::string()) +
      " of each clip ([database] trailing_unmatchable)";
  std::string cause;
  if (excluded_ranges == 0)
    cause = trailing + " cover every frame of " + clips_text + " (the longest, " + longest->name +
            ", has " + std::to_string(longest->frame_count) + " frames)";
  else if (trailing_unmatchable == 0)
    cause = "exclude = true ranges (" + where + ") cover every frame of " + clips_text;
  else
    cause =
        trailing + " and exclude = true ranges (" + where + ") cover every frame of " + clips_text;
  const std::string& manifest = clips.front().manifest;
  return (manifest.empty() ? "" : manifest + ": ") +
         "no frame is matchable, so a search could never start a clip: " + cause +
         "; lower trailing_unmatchable, remove or shorten an excluded range, or add longer clips";
}

}  // namespace

MatchableRanges buildMatchableRanges(const std::vector<ClipTagging>& clips,
                                     int trailing_unmatchable) {
  MatchableRanges out;
  for (const ClipTagging& clip : clips) {
    const int n = static_cast<int>(clip.frame_count);
    uint64_t clip_mask = 0;
    for (const auto& t : clip.tags) clip_mask |= uint64_t{1} << tagBit(t, clip.name, out.tag_names);
    out.clip_tag_masks.push_back(clip_mask);

    // Per clip-local frame: its mask, or not matchable.
    std::vector<uint64_t> mask(n, clip_mask);
    std::vector<double> bias(n, clip.bias);
    std::vector<uint8_t> matchable(n, 1);
    for (int f = n - trailing_unmatchable; f < n; ++f)
      if (f >= 0) matchable[f] = 0;
    for (const SubRangeSpec& r : clip.ranges) {
      const int end = r.to_end ? n : r.first_frame + r.frame_count;
      if (r.first_frame < 0 || end <= r.first_frame || end > n) throw outsideClip(clip, r, n);
      uint64_t add = 0;
      for (const auto& t : r.tags) add |= uint64_t{1} << tagBit(t, clip.name, out.tag_names);
      for (int f = r.first_frame; f < end; ++f) {
        mask[f] |= add;
        bias[f] += r.bias;
        if (r.exclude) matchable[f] = 0;
      }
    }

    bool any = false;
    for (int f = 0; f < n;) {
      if (!matchable[f]) {
        ++f;
        continue;
      }
      int end = f + 1;
      while (end < n && matchable[end] && mask[end] == mask[f] && bias[end] == bias[f]) ++end;
      const float range_bias = static_cast<float>(bias[f]);
      if (!std::isfinite(range_bias))
        throw InputError("clip " + clip.name + ": the cost bias of frames [" + std::to_string(f) +
                         ", " + std::to_string(end) + ") adds up to " + std::to_string(bias[f]) +
                         ", beyond a float; use smaller biases");
      out.ranges.push_back({clip.first_frame + static_cast<uint32_t>(f),
                            static_cast<uint32_t>(end - f), mask[f], range_bias});
      any = true;
      f = end;
    }
    if (!any) {
      out.warnings.push_back({"no-matchable-frames",
                              "clip " + clip.name + " has no matchable frame left (" +
                                  std::to_string(n) + " frames, the last " +
                                  std::to_string(trailing_unmatchable) +
                                  " are never matched and excluded ranges cut the rest); the "
                                  "search will never start it",
                              "", 0});
      out.warning_clips.push_back(size_t(&clip - clips.data()));
    }
  }
  if (out.ranges.empty() && !clips.empty())
    throw InputError(nothingMatchable(clips, trailing_unmatchable));
  return out;
}

}  // namespace mmdb::cook
