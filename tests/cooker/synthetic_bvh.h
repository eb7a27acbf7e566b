// BVH text of a small Geno-named skeleton with known motion, for the cook's tests.
#pragma once

#include <glm/vec3.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace mmdb::test {

// A Geno-named skeleton in centimetres, 30 frames per second.
// Per frame: hips position (cm) and yaw (degrees); feet positions relative to the hips (cm).
struct BvhFrame {
  glm::vec3 hips;
  float yaw_deg;
  glm::vec3 left_foot, right_foot;
};

inline std::string bvhText(const std::vector<BvhFrame>& frames, bool extra_joint = false) {
  std::ostringstream o;
  o << "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n"
       "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
       "  JOINT Spine2\n  {\n    OFFSET 0 30 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
       "    End Site\n    {\n      OFFSET 0 10 0\n    }\n  }\n";
  for (const char* side : {"Left", "Right"}) {
    o << "  JOINT " << side << "Foot\n  {\n    OFFSET 0 -80 0\n"
      << "    CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
      << "    JOINT " << side << "ToeBase\n    {\n      OFFSET 0 -5 10\n"
      << "      CHANNELS 3 Zrotation Xrotation Yrotation\n"
      << "      End Site\n      {\n        OFFSET 0 0 5\n      }\n    }\n  }\n";
  }
  if (extra_joint)
    o << "  JOINT Tail\n  {\n    OFFSET 0 0 -10\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
         "    End Site\n    {\n      OFFSET 0 0 -5\n    }\n  }\n";
  o << "}\nMOTION\nFrames: " << frames.size() << "\nFrame Time: 0.0333333\n";
  for (const auto& f : frames) {
    o << f.hips.x << " " << f.hips.y << " " << f.hips.z << " 0 0 " << f.yaw_deg << " 0 0 0 ";
    o << f.left_foot.x << " " << f.left_foot.y << " " << f.left_foot.z << " 0 0 0 0 0 0 ";
    o << f.right_foot.x << " " << f.right_foot.y << " " << f.right_foot.z << " 0 0 0 0 0 0";
    if (extra_joint) o << " 0 0 0";
    o << "\n";
  }
  return o.str();
}

// Straight walk at `speed` m/s along +Z: each foot stands for half of a 1 s cycle, then swings.
inline std::vector<BvhFrame> walkFrames(int count, float speed) {
  std::vector<BvhFrame> frames;
  auto foot = [&](int f) {
    const int k = f / 30, phase = f % 30;
    const float base = 100 * speed * k;
    return phase <= 15 ? base : base + 2 * 100 * speed * (phase - 15) / 30.0f;
  };
  for (int f = 0; f < count; ++f) {
    const float hz = 100 * speed * f / 30.0f;
    frames.push_back(
        {{0, 90, hz}, 0, {10, -80, foot(f) - hz}, {-10, -80, foot(f + 15) - 50 * speed - hz}});
  }
  return frames;
}

// A turn at `omega` rad/s on a circle of `radius` m, feet swinging forward and back.
inline std::vector<BvhFrame> circleFrames(int count, double omega, double radius) {
  std::vector<BvhFrame> frames;
  for (int f = 0; f < count; ++f) {
    const double a = omega * f / 30.0;
    const float swing = static_cast<float>(20 * std::sin(2 * M_PI * f / 30.0));
    frames.push_back({{static_cast<float>(100 * radius * (1 - std::cos(a))), 90,
                       static_cast<float>(100 * radius * std::sin(a))},
                      static_cast<float>(a * 180 / M_PI),
                      {10, -80, swing},
                      {-10, -80, -swing}});
  }
  return frames;
}

}  // namespace mmdb::test
