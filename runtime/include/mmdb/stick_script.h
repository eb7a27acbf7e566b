// A scripted gamepad stick: the input a player would give, as a list of timed segments (stand,
// walk forward, turn, run, stop, walk backwards, strafe, ...), so that a program drives characters
// headless and the same way every time. mmdb_sample plays it through a crowd; `mmcook diff`
// replays it against two databases. Each character reads the script at its own time offset, so a
// crowd does different things at once.
//
// A script is the built-in one (builtIn(), the sample's default) or a stick file, plain text, one
// segment per line (docs/runtime.md "Stick scripts"):
//
//   # seconds  heading   magnitude  gait  [facing]  name
//   1.5        0         0          walk            stand
//   2.0        0..90     1          walk            walk, turn left
//   2.5        90        0.8        walk  face=0    strafe left
//
// seconds (> 0), heading in degrees (yaw: 0 is +Z, 90 is +X; "A..B" sweeps linearly from A to B
// over the segment), magnitude 0..1, gait `walk` or `run`, optionally the facing `face=DEGREES`
// or `face=A..B` (the way the character is to face, the same angles; without it, along the
// stick), then the segment's name (the rest of the line; it cannot begin with `face=`). `#`
// starts a comment; blank lines are skipped.
//
// Errors are values: parse() and load() return InvalidArgument naming file:line and what is wrong
// (IoError for a file that cannot be read). A script allocates when it is made, never when read.
#pragma once

#include "mmdb/controller.h"
#include "mmdb/database.h"
#include "mmdb/result.h"

#include <glm/vec2.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mmdb {

// Limits of a stick file: a segment's length in seconds, the size in degrees of the heading (and
// of the facing), the number of segments and the size of the file.
inline constexpr double kMaxStickSegmentSeconds = 3600.0;
inline constexpr double kMaxStickHeadingDegrees = 36000.0;
inline constexpr size_t kMaxStickSegments = 10000;
inline constexpr size_t kMaxStickFileBytes = size_t{1} << 20;

// One piece of a script. Headings and facings are yaw angles in degrees: 0 is +Z (the way a
// character faces at the start), +90 is +X (a left turn, with Y up and the character facing +Z).
struct StickSegment {
  std::string name;
  double seconds = 1.0;
  double heading_begin = 0.0;
  double heading_end = 0.0;  // the stick sweeps linearly from begin to end over the segment
  float magnitude = 0.0f;    // 0 (released) .. 1 (fully pushed)
  bool run = false;          // the run button
  // The way the character is to face, apart from the stick (walking backwards, strafing): swept
  // linearly from begin to end like the heading. Without it (has_facing false, the two angles
  // unused) the character faces along the stick, and a released stick keeps the facing.
  bool has_facing = false;
  double facing_begin = 0.0;
  double facing_end = 0.0;
};

// What the stick says at one instant, in the world's ground plane.
struct ScriptedStick {
  glm::vec2 direction{0.0f, 1.0f};  // unit (x, z) direction the stick points to, in world space
  float magnitude = 0.0f;           // 0 (released) .. 1 (fully pushed)
  bool run = false;                 // the run button
  std::string_view segment;         // name of the script's segment (valid while the script is)
  // The unit (x, z) direction to face, world space, when has_facing (the segment has a facing);
  // else the character faces along `direction` and `facing` is unused.
  glm::vec2 facing{0.0f, 1.0f};
  bool has_facing = false;
};

// Speeds of the reference controller (Holden's Motion-Matching demo), m/s.
struct LocomotionSpeeds {
  float walk = 1.75f;
  float run = 4.0f;
};

class StickScript {
 public:
  // The sample's script (30 s): builtInLocomotion()'s segments, then walking backwards and
  // sideways while facing forward (+Z): turn, walk forward (0) 2 s; walk backwards (stick 180,
  // facing 0, magnitude 0.6) 2.5 s; strafe left (stick 90, facing 0, 0.8) 2.5 s; strafe right
  // (stick -90, facing 0, 0.8) 2.5 s; stop (facing 0) 1.5 s.
  static StickScript builtIn();
  // The first 19 s of builtIn(), the sample's script before it walked backwards and sideways, for
  // comparisons with runs made then: stand, walk forward, turn left, sharp right, run, run
  // turning left, stop, walk back (turning round), stop; the character always faces along the
  // stick.
  static StickScript builtInLocomotion();
  // A script from its segments: InvalidArgument naming the segment (from 1) when one has no
  // name, a length outside (0, kMaxStickSegmentSeconds], a heading (or, with has_facing, a
  // facing) that is not finite or over kMaxStickHeadingDegrees in size, or a magnitude outside
  // [0, 1]; or when there is none.
  static Result<StickScript> fromSegments(std::vector<StickSegment> segments);
  // Parses the text of a stick file; `file` names it in errors ("FILE:LINE: what is wrong").
  static Result<StickScript> parse(std::string_view text, std::string_view file);
  // Reads and parses a stick file: IoError when it cannot be read or is over kMaxStickFileBytes.
  static Result<StickScript> load(const char* path);

  const std::vector<StickSegment>& segments() const noexcept { return segments_; }
  // Length of the script in seconds; it loops after that.
  double duration() const noexcept { return duration_; }
  // The stick at time t (seconds, any value; the script loops). Pure function of t.
  ScriptedStick at(double t) const noexcept;
  // The time offset of character `index` into the script, spread so that a crowd is
  // desynchronized (golden-ratio spacing: any number of characters, none aligned). 0 for 0.
  double characterOffset(uint32_t index) const noexcept;

 private:
  std::vector<StickSegment> segments_;
  double duration_ = 0.0;
};

// The world velocity (x, z) the player asks for with this stick.
glm::vec2 desiredVelocity(const ScriptedStick& stick, const LocomotionSpeeds& speeds = {}) noexcept;

// The controller's input for a scripted stick: velocity from the stick at these speeds; facing
// the stick's facing when it has one (released or not), else along the stick (a released stick,
// magnitude 0.01 or less, keeps the current facing).
StickInput stickInput(const ScriptedStick& stick, const LocomotionSpeeds& speeds) noexcept;

// True when the stick moved enough since `previous` that the animation should react now rather
// than at the next periodic search (Crowd::forceSearch): a direction change over 30 degrees while
// both are pushed (magnitude over 0.1), or a magnitude change over 0.3, or a run change, or a
// facing change over 30 degrees while both ask for a facing (a stick with a facing asks for it,
// one without asks to face along the stick when pushed over 0.1, and a released one for nothing).
bool stickChangedSharply(const ScriptedStick& previous, const ScriptedStick& current) noexcept;

// Stick speeds the database can follow: the reference's walk and run speeds, the run capped at
// the 95th percentile of the root speed over matchable frames (at least 0.2 m/s) and the walk at
// 60% of the run. `top_speed`, when not null, receives that percentile (0 with no matchable
// frame, when the speeds are the reference's).
LocomotionSpeeds speedsForDatabase(const Database& db, float* top_speed = nullptr);

}  // namespace mmdb
