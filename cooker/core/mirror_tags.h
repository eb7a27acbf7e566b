// A mirrored copy's tags (docs/cook.md "Mirror"): the words of [mirror] tag_pairs swapped, so a
// clip tagged "strafe-left" has a mirrored copy tagged "strafe-right". The manifest reader checks
// the pairs and the tags they make; the link tags the mirrored copies with them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mmdb::cook {

using TagPairs = std::vector<std::pair<std::string, std::string>>;

// Whether `word` can be one word of a tag pair: 1 to 64 ASCII letters and digits. A pair's word
// is matched against one name part of a tag, and '-', '_' and '.' separate the parts.
bool isTagPairWord(std::string_view word);

// Whether two words are the same word, case aside.
bool sameTagPairWord(std::string_view a, std::string_view b);

// The tag of the mirrored copy: `tag` split into name parts at '-', '_' and '.', and each part
// that is a word of a pair, written in lower case, Capitalized (the first letter upper case, the
// rest lower) or in UPPER case, replaced by the pair's other word in the same case; every other
// part (a word in another mix of cases, a word inside a longer part) and every separator is kept.
// "left" -> "right", "Strafe-Left" -> "Strafe-Right", "turn_LEFT_90" -> "turn_RIGHT_90",
// "right.foot" -> "left.foot", "leftover" -> "leftover". The pairs' words are isTagPairWord and
// no two of them are the same word (sameTagPairWord), as the manifest reader checks.
std::string mirroredTag(std::string_view tag, const TagPairs& pairs);

// mirroredTag() of each tag, in order, a tag that two of them become kept once.
std::vector<std::string> mirroredTags(const std::vector<std::string>& tags, const TagPairs& pairs);

}  // namespace mmdb::cook
