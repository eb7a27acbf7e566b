// A scripted gamepad stick: the input a player would give, as piecewise segments (stand, walk
// forward, turn left and right, run, stop, walk back), so the sample runs headless and the same
// way every time. Each character reads the script at its own time offset, so a crowd does
// different things at once.
#pragma once

#include <glm/vec2.hpp>

#include <string_view>

namespace mmdb::sample {

// What the stick says at one instant, in the world's ground plane.
struct ScriptedStick {
  glm::vec2 direction{0.0f, 1.0f};  // unit (x, z) direction the stick points to, in world space
  float magnitude = 0.0f;           // 0 (released) .. 1 (fully pushed)
  bool run = false;                 // the run button
  std::string_view segment;         // name of the script segment, for the log
};

// Speeds of the reference controller (Holden's Motion-Matching demo), m/s.
struct LocomotionSpeeds {
  float walk = 1.75f;
  float run = 4.0f;
};

// The script's length in seconds; it loops after that.
double stick_script_duration();

// The stick at time t (seconds, any value; the script loops). Pure function of t.
ScriptedStick scripted_stick(double t);

// The time offset of character `index` into the script, spread so that a crowd is desynchronized.
double character_time_offset(int index);

// The world velocity (x, z) the player asks for with this stick.
glm::vec2 desired_velocity(const ScriptedStick& stick, const LocomotionSpeeds& speeds = {});

// True when the stick moved enough since `previous` that the animation should react now rather
// than at the next periodic search: a direction change over 30 degrees while pushed, or a
// magnitude or run change.
bool stick_changed_sharply(const ScriptedStick& previous, const ScriptedStick& current);

}  // namespace mmdb::sample
