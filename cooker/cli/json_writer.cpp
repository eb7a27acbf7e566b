#include "cli/json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mmdb::cook {

JsonWriter::~JsonWriter() {
  if (done_) out_ << '\n';
}

void JsonWriter::newline() {
  out_ << '\n';
  for (size_t i = 0; i < stack_.size(); ++i) out_ << "  ";
}

void JsonWriter::beforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level& level = stack_.back();
  if (!level.empty) out_ << ',';
  level.empty = false;
  newline();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  beforeValue();
  out_ << escape(name) << ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::beginObject() {
  beforeValue();
  out_ << '{';
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::beginArray() {
  beforeValue();
  out_ << '[';
  stack_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::endObject() { return endArray(); }

JsonWriter& JsonWriter::endArray() {
  const bool was_empty = stack_.back().empty;
  const bool is_object = stack_.back().is_object;
  stack_.pop_back();
  if (!was_empty) newline();
  out_ << (is_object ? '}' : ']');
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  beforeValue();
  out_ << escape(text);
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  beforeValue();
  if (!std::isfinite(number)) {
    out_ << "null";
  } else {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.9g", number);
    out_ << buffer;
  }
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::value(float number) {
  beforeValue();
  if (!std::isfinite(number)) {
    out_ << "null";
  } else {
    char buffer[32];
    for (int precision = 6; precision <= 9; ++precision) {
      std::snprintf(buffer, sizeof(buffer), "%.*g", precision, static_cast<double>(number));
      if (std::strtof(buffer, nullptr) == number) break;
    }
    out_ << buffer;
  }
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  beforeValue();
  out_ << number;
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  beforeValue();
  out_ << number;
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  beforeValue();
  out_ << (flag ? "true" : "false");
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::null() {
  beforeValue();
  out_ << "null";
  done_ = stack_.empty();
  return *this;
}

namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not valid.
size_t utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  if (lead >= 0xC2 && lead <= 0xDF)
    length = 2;
  else if (lead >= 0xE0 && lead <= 0xEF)
    length = 3;
  else if (lead >= 0xF0 && lead <= 0xF4)
    length = 4;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return length;
}

}  // namespace

std::string JsonWriter::escape(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else if (c < 0x80) {
          out += static_cast<char>(c);
        } else if (const size_t length = utf8SequenceLength(text, i)) {
          out.append(text.substr(i, length));
          i += length - 1;
        } else {
          out += "\\ufffd";  // not UTF-8 (a Latin-1 joint name, say): keep the JSON valid
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace mmdb::cook
