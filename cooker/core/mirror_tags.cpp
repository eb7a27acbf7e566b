#include "core/mirror_tags.h"

#include <algorithm>

namespace mmdb::cook {
namespace {

bool isSeparator(char c) { return c == '-' || c == '_' || c == '.'; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// The three spellings a pair's word matches in, tried in this order.
enum class Spelling { Lower, Capitalized, Upper };

std::string spelled(std::string_view word, Spelling spelling) {
  std::string out(word);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = spelling == Spelling::Upper || (spelling == Spelling::Capitalized && i == 0)
                 ? upper(out[i])
                 : lower(out[i]);
  return out;
}

// The part a mirrored copy has for `part`: the other word of the pair that `part` spells, in the
// same spelling; `part` itself when it spells none.
std::string mirroredPart(std::string_view part, const TagPairs& pairs) {
  for (const auto& [a, b] : pairs) {
    for (const auto& [from, to] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
      if (part.size() != from->size() || !sameTagPairWord(part, *from)) continue;
      for (Spelling s : {Spelling::Lower, Spelling::Capitalized, Spelling::Upper})
        if (part == spelled(*from, s)) return spelled(*to, s);
    }
  }
  return std::string(part);
}

}  // namespace

bool isTagPairWord(std::string_view word) {
  if (word.empty() || word.size() > 64) return false;
  return std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

bool sameTagPairWord(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

std::string mirroredTag(std::string_view tag, const TagPairs& pairs) {
  std::string out;
  out.reserve(tag.size() + 8);
  size_t begin = 0;
  while (begin <= tag.size()) {
    size_t end = begin;
    while (end < tag.size() && !isSeparator(tag[end])) ++end;
    out += mirroredPart(tag.substr(begin, end - begin), pairs);
    if (end == tag.size()) break;
    out += tag[end];
    begin = end + 1;
  }
  return out;
}

std::vector<std::string> mirroredTags(const std::vector<std::string>& tags, const TagPairs& pairs) {
  std::vector<std::string> out;
  for (const std::string& tag : tags) {
    std::string mirrored = mirroredTag(tag, pairs);
    if (std::find(out.begin(), out.end(), mirrored) == out.end())
      out.push_back(std::move(mirrored));
  }
  return out;
}

}  // namespace mmdb::cook
