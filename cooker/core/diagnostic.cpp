#include "core/diagnostic.h"

namespace mmdb::cook {

std::string diagnostic(std::string_view severity, const std::string& file, int line,
                       std::string_view message) {
  std::string out;
  if (!file.empty() && line > 0) {
    out = file + ":" + std::to_string(line) + ": ";
  } else {
    out = "mmcook: ";
  }
  out += severity;
  out += ": ";
  if (!file.empty() && line <= 0) out += file + ": ";
  out += message;
  return out;
}

namespace {

// `text` without `place` in front of it.
std::string_view after(std::string_view text, const std::string& place) {
  return text.substr(0, place.size()) == place ? text.substr(place.size()) : text;
}

}  // namespace

std::string warningDiagnostic(const Warning& w, const std::string& manifest, int manifest_line) {
  if (!w.file.empty() && w.line > 0)
    return diagnostic("warning", w.file, w.line,
                      after(w.text, w.file + ":" + std::to_string(w.line) + ": "));
  if (!manifest.empty() && manifest_line > 0)
    return diagnostic("warning", manifest, manifest_line, w.text);
  return diagnostic("warning", w.file, 0, w.file.empty() ? w.text : after(w.text, w.file + ": "));
}

}  // namespace mmdb::cook
