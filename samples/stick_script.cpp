#include "stick_script.h"

#include <glm/geometric.hpp>

#include <cmath>
#include <iterator>

namespace mmdb::sample {
namespace {

constexpr double kPi = 3.14159265358979323846;

// One piece of the script. Headings are yaw angles in degrees: 0 is +Z (the way a character
// faces at the start), +90 is +X (a left turn, with Y up and the character facing +Z).
struct Segment {
  std::string_view name;
  double seconds;
  double heading_begin;
  double heading_end;  // the stick sweeps linearly from begin to end over the segment
  float magnitude;
  bool run;
};

constexpr Segment kScript[] = {
    {"stand", 1.5, 0.0, 0.0, 0.0f, false},
    {"walk forward", 3.0, 0.0, 0.0, 1.0f, false},
    {"walk, turn left", 2.0, 0.0, 90.0, 1.0f, false},
    {"walk, sharp right", 2.0, -90.0, -90.0, 1.0f, false},
    {"run", 3.0, -90.0, -90.0, 1.0f, true},
    {"run, turn left", 2.0, -90.0, 0.0, 1.0f, true},
    {"stop", 2.0, 0.0, 0.0, 0.0f, false},
    {"walk back", 2.0, 180.0, 180.0, 0.6f, false},
    {"stop", 1.5, 180.0, 180.0, 0.0f, false},
};

glm::vec2 heading_direction(double degrees) {
  const double radians = degrees * kPi / 180.0;
  return {static_cast<float>(std::sin(radians)), static_cast<float>(std::cos(radians))};
}

}  // namespace

double stick_script_duration() {
  double total = 0.0;
  for (const Segment& segment : kScript) total += segment.seconds;
  return total;
}

ScriptedStick scripted_stick(double t) {
  const double duration = stick_script_duration();
  double local = std::fmod(t, duration);
  if (local < 0.0) local += duration;
  for (const Segment& segment : kScript) {
    if (local < segment.seconds) {
      const double alpha = local / segment.seconds;
      const double heading =
          segment.heading_begin + (segment.heading_end - segment.heading_begin) * alpha;
      return {heading_direction(heading), segment.magnitude, segment.run, segment.name};
    }
    local -= segment.seconds;
  }
  // Only reached through rounding at the very end of the loop.
  const Segment& last = kScript[std::size(kScript) - 1];
  return {heading_direction(last.heading_end), last.magnitude, last.run, last.name};
}

double character_time_offset(int index) {
  // Golden-ratio spacing: any number of characters spread evenly over the loop, none aligned.
  constexpr double kGoldenFraction = 0.6180339887498949;
  return std::fmod(index * kGoldenFraction, 1.0) * stick_script_duration();
}

glm::vec2 desired_velocity(const ScriptedStick& stick, const LocomotionSpeeds& speeds) {
  const float speed = stick.run ? speeds.run : speeds.walk;
  return stick.direction * (stick.magnitude * speed);
}

bool stick_changed_sharply(const ScriptedStick& previous, const ScriptedStick& current) {
  constexpr float kMagnitudeChange = 0.3f;
  constexpr float kPushed = 0.1f;
  const float cos_30_degrees = static_cast<float>(std::cos(30.0 * kPi / 180.0));
  if (std::abs(current.magnitude - previous.magnitude) > kMagnitudeChange) return true;
  if (current.run != previous.run) return true;
  const bool both_pushed = previous.magnitude > kPushed && current.magnitude > kPushed;
  return both_pushed && glm::dot(previous.direction, current.direction) < cos_30_degrees;
}

}  // namespace mmdb::sample
