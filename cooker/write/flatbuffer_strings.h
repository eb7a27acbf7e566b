// A vector of strings into a FlatBuffers builder, for the .mmdb and .mmclip writers.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <string>
#include <vector>

namespace mmdb::cook {

inline flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
stringVector(flatbuffers::FlatBufferBuilder& fbb, const std::vector<std::string>& values) {
  std::vector<flatbuffers::Offset<flatbuffers::String>> out;
  out.reserve(values.size());
  for (const std::string& s : values) out.push_back(fbb.CreateString(s));
  return fbb.CreateVector(out);
}

}  // namespace mmdb::cook
