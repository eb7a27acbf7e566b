// A warning of the cook: something the cook went on past that a user may want to fix. Each kind
// has a stable code (docs/cook-report.md "Warning codes" lists them) that tools and --werror
// builds can rely on; the text is for people and may change.
#pragma once

#include <string>

namespace mmdb::cook {

struct Warning {
  std::string code;  // "bvh-frame-count", "unit-scale-ignored", ...: see docs/cook-report.md
  std::string text;  // the whole message
  std::string file;  // the file it is about (a source as the cook opened it), or ""
  int line = 0;      // the line in `file` it is about, or 0
};

}  // namespace mmdb::cook
