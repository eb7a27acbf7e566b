// The per-clip part of the cook (docs/cook.md "Order of the stages", 5-8) on a clip already in
// metres and at the database rate: root motion, stripping, velocities, contacts and raw features.
#pragma once

#include "cook/skeleton_presets.h"
#include "core/cook_settings.h"
#include "core/cooked_database.h"
#include "core/raw_clip.h"

#include <array>
#include <string>
#include <vector>

namespace mmdb::cook {

// CookSettings' times turned into frame counts at the database rate: made by clipStageSettings(),
// so it has no defaults of its own.
struct ClipStageSettings {
  double frame_rate = 0;
  int root_position_window = 0;
  int facing_window = 0;
  int order = 0;
  float contact_speed_threshold = 0;
  int contact_median_frames = 0;
  int trailing_unmatchable_frames = 0;
  std::array<int, 3> trajectory_frames{};
};

// Throws InputError for settings that cannot work (rate, windows, order, thresholds).
ClipStageSettings clipStageSettings(const CookSettings& settings);

// Root speed above which a frame counts as moving for the facing check, m/s.
inline constexpr double kMovingSpeed = 0.5;

// How well local axes of the facing joint follow the direction of travel over a clip's moving
// frames: sums of cos(angle between the ground-projected axis and the root's velocity).
struct FacingAgreement {
  static constexpr int kCandidates = 6;  // +X, -X, +Y, -Y, +Z, -Z
  std::array<double, kCandidates> candidate_sum{};
  double configured_sum = 0;
  long long moving_frames = 0;
};
glm::vec3 facingCandidateAxis(int candidate);

struct ClipMotion {
  RawClip clip;  // root motion stripped from joint 0
  std::vector<CookedRootFrame> root;
  std::vector<glm::vec3> velocities;          // local, [frame * joints + joint]
  std::vector<glm::vec3> angular_velocities;  // local
  std::vector<uint32_t> contacts;             // bit 0 left toe, bit 1 right toe
  std::vector<float> features;                // raw, kFeatureCount per frame
  FacingAgreement facing;
  std::vector<Warning> warnings;  // the import's, then the clip stages'
};

// Runs steps 4-7 on `clip` (metres, at settings.frame_rate).
ClipMotion cookClipMotion(RawClip clip, const SkeletonRoles& roles,
                          const ClipStageSettings& settings);

}  // namespace mmdb::cook
