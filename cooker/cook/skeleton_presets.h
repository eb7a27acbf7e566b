// Skeleton role presets: which joint plays which role (docs/cook.md "Skeleton roles and presets"),
// the facing axis and the source unit, per naming convention. Add a convention by appending a
// SkeletonPreset to the table in skeleton_presets.cpp; auto-detection tries them in order.
#pragma once

#include "core/cook_settings.h"
#include "core/cooked_database.h"
#include "core/raw_clip.h"

#include <glm/vec3.hpp>

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mmdb::cook {

inline constexpr int kRoleCount = 7;  // Role::Hips .. Role::Facing

// Role name as the manifest spells it: "hips", "left_foot", ..., "root_position", "facing".
const char* roleName(Role role);

struct SkeletonPreset {
  std::string name;
  // Joint name per role, indexed by Role.
  std::array<std::string, kRoleCount> joints;
  glm::vec3 facing_axis{0, 0, 1};  // local axis of the facing joint that follows travel
  double unit_scale = 0;           // metres per source unit; 0 = none (declared or inferred)
  // Left/right joint name pairs that the mirror name patterns do not catch.
  std::vector<std::pair<std::string, std::string>> mirror_pairs;
};

// The built-in presets, in auto-detection order.
const std::vector<SkeletonPreset>& builtinPresets();
// nullptr when no built-in preset has that name.
const SkeletonPreset* findPreset(std::string_view name);

// The roles a cook uses, as joint indices into one skeleton.
struct SkeletonRoles {
  std::string preset;  // "" when every role was given by the settings
  std::array<int, kRoleCount> joints{};
  glm::vec3 facing_axis{0, 0, 1};
  double preset_unit_scale = 0;
  const SkeletonPreset* preset_entry = nullptr;

  int joint(Role role) const { return joints[static_cast<int>(role)]; }
  // "left_foot: LeftFoot (joint 4)", one line per role.
  std::vector<std::string> describe(const Skeleton& skeleton) const;
};

// Picks the preset (settings.preset, or the first built-in whose role joints all exist once the
// per-role overrides are applied), then applies the overrides. Throws InputError naming `what`
// (a clip), the role and the missing joint, and listing the skeleton's joints.
SkeletonRoles resolveRoles(const Skeleton& skeleton, const RoleSettings& settings,
                           const std::string& what);

}  // namespace mmdb::cook
