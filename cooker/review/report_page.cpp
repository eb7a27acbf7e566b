#include "review/report_page.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace mmcook::review::html {

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string out(size_t(std::max(size, 0)), '\0');
  std::vsnprintf(out.data(), out.size() + 1, fmt, again);
  va_end(again);
  return out;
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

std::string costText(float cost) {
  return std::isfinite(cost) ? format("%.3g", double(cost)) : std::string("no match");
}

std::string costColour(float t) {
  if (!std::isfinite(t)) return "#868e96";
  t = std::clamp(t, 0.f, 1.f);
  const float hue = 130.f * (1.f - t);
  return format("hsl(%.0f,70%%,%.0f%%)", double(hue), double(45.f + 10.f * (1.f - t)));
}

std::string answeredBy(const mmdb::Database& db, int32_t frame) {
  if (frame < 0) return "-";
  const int32_t clip = db.clipOfFrame(uint32_t(frame));
  if (clip < 0) return format("frame %d", frame);
  const mmdb::ClipInfo info = db.clip(uint32_t(clip));
  return format("%.*s, local frame %u", int(info.name.size()), info.name.data(),
                uint32_t(frame) - info.first_frame);
}

const char* reasonName(mmdb::SearchReason reason) {
  switch (reason) {
    case mmdb::SearchReason::None:
      return "none";
    case mmdb::SearchReason::Start:
      return "start";
    case mmdb::SearchReason::RangeEnd:
      return "end of range";
    case mmdb::SearchReason::Forced:
      return "stick change";
    case mmdb::SearchReason::Periodic:
      return "periodic";
  }
  return "unknown";
}

void openColumns(Page& page, size_t n) {
  page += format("<div class=\"columns\" style=\"--n:%zu\">", n);
}

void openPanel(Page& page, const Side& side, const std::string& section, size_t sides) {
  page += format("<div class=\"db\" data-db=\"%s\" data-section=\"%s\">", side.label.c_str(),
                 section.c_str());
  if (sides > 1)
    page += format("<h3>%s: %s</h3>", side.label.c_str(), escape(side.input.path).c_str());
}

bool weightsDiffer(const mmdb::Database& a, const mmdb::Database& b) {
  if (a.featureBlockCount() != b.featureBlockCount()) return true;
  for (uint32_t i = 0; i < a.featureBlockCount(); ++i)
    if (a.featureBlock(i).name != b.featureBlock(i).name ||
        a.featureBlock(i).weight != b.featureBlock(i).weight)
      return true;
  return false;
}

}  // namespace mmcook::review::html
