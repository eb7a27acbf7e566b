// Matchable ranges and tags (docs/cook.md "Ranges and tags").
#pragma once

#include "core/cook_settings.h"
#include "core/cooked_database.h"
#include "core/warning.h"

#include <string>
#include <vector>

namespace mmdb::cook {

// One cooked clip as the range builder sees it.
struct ClipTagging {
  std::string name;
  uint32_t first_frame = 0;  // global
  uint32_t frame_count = 0;
  std::vector<std::string> tags;     // apply to the whole clip
  std::vector<SubRangeSpec> ranges;  // clip-local frames at the database rate
  double bias = 0;                   // the clip's cost bias
  std::string manifest = {};         // for messages: the manifest's path ("" for none) ...
  double frame_rate = 0;             // ... and the database rate (0: messages speak in frames)
};

struct MatchableRanges {
  std::vector<std::string> tag_names;  // bit i = tag_names[i], in order of first appearance
  std::vector<uint64_t> clip_tag_masks;
  // Maximal runs of one tag mask and one bias inside a clip, frame order.
  std::vector<CookedRange> ranges;
  std::vector<Warning> warnings;
  std::vector<size_t> warning_clips;  // per warning, the clip (index into `clips`) it is about
};

// Tags are numbered in order of first appearance: a clip's own tags, then its sub-ranges' tags,
// clip after clip. Each clip's last `trailing_unmatchable` frames and its excluded sub-ranges are
// left out. A frame's bias is its clip's plus that of every sub-range holding it (summed in
// double, stored as float). Throws InputError naming the clip for a sub-range outside it, for a
// 65th tag, for a bias sum that is not a finite float, and when no frame of any clip is
// matchable (a database no search could start), naming the settings that cut them out.
MatchableRanges buildMatchableRanges(const std::vector<ClipTagging>& clips,
                                     int trailing_unmatchable);

}  // namespace mmdb::cook
