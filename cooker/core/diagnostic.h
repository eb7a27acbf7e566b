// Diagnostics in the form compilers print them, which IDEs and CI problem matchers read
// (`^(.+):(\d+):(\d+:)? (warning|error): (.+)$`):
//   FILE:LINE: warning: message    at a line of a file (a manifest's [[clip]], a BVH's Frames:)
//   mmcook: warning: message       at no line of a file (one it is about starts the message,
//                                  "mmcook: warning: FILE: message", as GCC's "gcc: error: ...")
// and the same with "error". Every warning and error mmcook prints is one of these.
#pragma once

#include "core/warning.h"

#include <string>
#include <string_view>

namespace mmdb::cook {

// One line (no newline) of `severity` ("warning" or "error") at `file`:`line`; with line 0 or
// file "", mmcook's own, the file (if any) first in the message.
std::string diagnostic(std::string_view severity, const std::string& file, int line,
                       std::string_view message);

// A warning's line: at its own place (a line of a source) when it has one, else at the manifest
// line of the clip it is about (`manifest_line` > 0 in `manifest`), else mmcook's (about its
// file, if any). A text that begins with the place printed ("walk.bvh:12: ", "walk.fbx: ") does
// not repeat it.
std::string warningDiagnostic(const Warning& w, const std::string& manifest, int manifest_line);

}  // namespace mmdb::cook
