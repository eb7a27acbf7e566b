// A small streaming JSON writer for `mmcook inspect --json`: objects, arrays, escaped strings,
// numbers (non-finite ones become null), two-space indentation.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace mmdb::cook {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  ~JsonWriter();  // ends with a newline once the top-level value is complete

  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(std::string_view name);  // inside an object, before each value

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(float number);  // the shortest text that reads back as the same float
  JsonWriter& value(int64_t number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(unsigned number) { return value(static_cast<uint64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();

  // Shorthand for key(name).value(v).
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    return key(name).value(v);
  }

  static std::string escape(std::string_view text);  // with the quotes

 private:
  void beforeValue();
  void newline();

  struct Level {
    bool is_object;
    bool empty = true;
  };
  std::ostream& out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  bool done_ = false;
};

}  // namespace mmdb::cook
