#include "cook/skeleton_presets.h"

#include "core/errors.h"

#include <glm/geometric.hpp>

#include <cmath>

namespace mmdb::cook {
namespace {

constexpr double kCmuUnit = 2.54 / 45.0;  // raw CMU BVH unit in metres (CMU mocap FAQ)

// Roles in Role order: hips, left foot, right foot, left toe, right toe, root position, facing.
std::vector<SkeletonPreset> makeBuiltinPresets() {
  std::vector<SkeletonPreset> presets;
  // LAFAN1 (original release) as used by the Learned Motion Matching reference: the facing
  // axis is the hips' local +Y there.
  presets.push_back({"lafan1",
                     {"Hips", "LeftFoot", "RightFoot", "LeftToe", "RightToe", "Spine2", "Hips"},
                     {0, 1, 0},
                     0.01,
                     {}});
  // Geno, the LAFAN1-resolved character: toes are *ToeBase and the hips' bind frame is the
  // world's, so local +Z faces forward.
  presets.push_back(
      {"geno",
       {"Hips", "LeftFoot", "RightFoot", "LeftToeBase", "RightToeBase", "Spine2", "Hips"},
       {0, 0, 1},
       0.01,
       {}});
  // Bandai Namco Research Motiondataset: root joint_Root, then Hips; Spine -> Chest -> Neck.
  presets.push_back({"bandai",
                     {"Hips", "Foot_L", "Foot_R", "Toes_L", "Toes_R", "Chest", "Hips"},
                     {0, 0, 1},
                     0.01,
                     {}});
  // CMU BVH, "3ds Max friendly" naming (LeftAnkle, LeftToe; lowerback -> Chest -> Chest2).
  presets.push_back({"cmu",
                     {"Hips", "LeftAnkle", "RightAnkle", "LeftToe", "RightToe", "Chest2", "Hips"},
                     {0, 0, 1},
                     kCmuUnit,
                     {{"LHipJoint", "RHipJoint"}, {"lhand", "rhand"}}});
  // CMU BVH, "MotionBuilder friendly" naming (LeftFoot, LeftToeBase; Spine -> Spine1 -> Neck).
  presets.push_back(
      {"cmu-motionbuilder",
       {"Hips", "LeftFoot", "RightFoot", "LeftToeBase", "RightToeBase", "Spine1", "Hips"},
       {0, 0, 1},
       kCmuUnit,
       {{"LHipJoint", "RHipJoint"}}});
  // The CMU FBX exports (Blender, x100 armature over raw CMU units) use the naming above too.
  // Mixamo: every name in the "mixamorig:" namespace; the hips' bind frame is the world's and
  // files are in centimetres.
  presets.push_back(
      {"mixamo",
       {"mixamorig:Hips", "mixamorig:LeftFoot", "mixamorig:RightFoot", "mixamorig:LeftToeBase",
        "mixamorig:RightToeBase", "mixamorig:Spine2", "mixamorig:Hips"},
       {0, 0, 1},
       0.01,
       {}});
  return presets;
}

const std::string& overrideFor(const RoleSettings& s, Role role) {
  switch (role) {
    case Role::Hips:
      return s.hips;
    case Role::LeftFoot:
      return s.left_foot;
    case Role::RightFoot:
      return s.right_foot;
    case Role::LeftToe:
      return s.left_toe;
    case Role::RightToe:
      return s.right_toe;
    case Role::RootPosition:
      return s.root_position;
    case Role::Facing:
      return s.facing;
  }
  return s.hips;
}

std::string jointList(const Skeleton& skeleton) {
  std::string out;
  for (const auto& n : skeleton.names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string presetList() {
  std::string out;
  for (const auto& p : builtinPresets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

// The first role whose joint (override or preset's) the skeleton lacks; -1 when none.
int firstMissingRole(const Skeleton& skeleton, const RoleSettings& s, const SkeletonPreset* p) {
  for (int r = 0; r < kRoleCount; ++r) {
    const std::string& o = overrideFor(s, static_cast<Role>(r));
    const std::string& name = o.empty() && p ? p->joints[r] : o;
    if (name.empty() || skeleton.find(name) < 0) return r;
  }
  return -1;
}

}  // namespace

const char* roleName(Role role) {
  static const char* const kNames[kRoleCount] = {
      "hips", "left_foot", "right_foot", "left_toe", "right_toe", "root_position", "facing"};
  return kNames[static_cast<int>(role)];
}

const std::vector<SkeletonPreset>& builtinPresets() {
  static const std::vector<SkeletonPreset> presets = makeBuiltinPresets();
  return presets;
}

const SkeletonPreset* findPreset(std::string_view name) {
  for (const auto& p : builtinPresets())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> SkeletonRoles::describe(const Skeleton& skeleton) const {
  std::vector<std::string> lines;
  for (int r = 0; r < kRoleCount; ++r)
    lines.push_back(std::string(roleName(static_cast<Role>(r))) + ": " + skeleton.names[joints[r]] +
                    " (joint " + std::to_string(joints[r]) + ")");
  return lines;
}

[[noreturn]] static void throwMissingJoint(const Skeleton& skeleton, Role role,
                                           const std::string& name, const SkeletonPreset* from,
                                           const std::string& what) {
  throw InputError(what + ": role " + roleName(role) + " names joint '" + name +
                   "', which the skeleton does not have" +
                   (from ? " (from preset " + from->name + ")" : "") + "; set [skeleton] " +
                   roleName(role) +
                   " in the manifest to one of the skeleton's joints: " + jointList(skeleton));
}

SkeletonRoles resolveRoles(const Skeleton& skeleton, const RoleSettings& settings,
                           const std::string& what) {
  // A joint named by the settings must exist whatever the preset.
  for (int r = 0; r < kRoleCount; ++r) {
    const std::string& o = overrideFor(settings, static_cast<Role>(r));
    if (!o.empty() && skeleton.find(o) < 0)
      throwMissingJoint(skeleton, static_cast<Role>(r), o, nullptr, what);
  }
  const SkeletonPreset* preset = nullptr;
  if (!settings.preset.empty()) {
    preset = findPreset(settings.preset);
    if (!preset)
      throw InputError("unknown skeleton preset '" + settings.preset +
                       "'; the presets are: " + presetList());
  } else if (firstMissingRole(skeleton, settings, nullptr) >= 0) {
    // Not every role is given: auto-detect the first preset that fits.
    for (const auto& p : builtinPresets())
      if (firstMissingRole(skeleton, settings, &p) < 0) {
        preset = &p;
        break;
      }
    if (!preset) {
      std::string tried;
      for (const auto& p : builtinPresets()) {
        const int r = firstMissingRole(skeleton, settings, &p);
        tried += (tried.empty() ? "" : ", ") + p.name + " (no " + p.joints[r] + ")";
      }
      throw InputError(
          what + ": no skeleton preset fits this skeleton; tried " + tried +
          ". Name the joints under [skeleton] in the manifest (hips, left_foot, "
          "right_foot, left_toe, right_toe, root_position, facing). The skeleton's joints are: " +
          jointList(skeleton));
    }
  }

  SkeletonRoles roles;
  roles.preset = preset ? preset->name : "";
  roles.preset_entry = preset;
  roles.preset_unit_scale = preset ? preset->unit_scale : 0.0;
  for (int r = 0; r < kRoleCount; ++r) {
    const Role role = static_cast<Role>(r);
    const std::string& o = overrideFor(settings, role);
    const std::string& name = o.empty() && preset ? preset->joints[r] : o;
    const int j = skeleton.find(name);
    if (j < 0) throwMissingJoint(skeleton, role, name, o.empty() ? preset : nullptr, what);
    roles.joints[r] = j;
  }
  const glm::vec3 axis = settings.facing_axis ? *settings.facing_axis
                                              : (preset ? preset->facing_axis : glm::vec3(0, 0, 1));
  const float len = glm::length(axis);
  if (!(len > 1e-6f) || !std::isfinite(len))
    throw InputError(what + ": the facing axis must be a non-zero vector, e.g. [0, 0, 1]");
  roles.facing_axis = axis / len;
  return roles;
}

}  // namespace mmdb::cook
