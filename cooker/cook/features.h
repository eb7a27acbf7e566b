// Matching features (docs/cook.md "Features"): 27 floats per frame in the simulation root's
// frame, in seven blocks.
#pragma once

#include "cook/contacts.h"
#include "cook/skeleton_presets.h"
#include "core/cook_settings.h"
#include "core/cooked_database.h"
#include "core/raw_clip.h"

#include <array>
#include <vector>

namespace mmdb::cook {

inline constexpr int kFeatureCount = 27;
inline constexpr int kFeatureStride = 28;  // rows padded to a multiple of 4 floats for std430
inline constexpr int kFeatureBlockCount = 7;

// The seven blocks in column order with their weights (both feet share the foot weights); std is
// filled in by normalization.
std::vector<CookedFeatureBlock> featureBlocks(const SkeletonRoles& roles,
                                              const std::array<float, kWeightCount>& weights);

// Which manifest weight each block uses (kBlockFootPosition, ...).
FeatureBlockId blockWeightId(int block);

struct FeatureBuilder {
  std::array<int, 3> trajectory_frames{};  // future samples, frames at the clip's rate (from
                                           // ClipStageSettings)

  // Raw features, kFeatureCount per frame. `clip` is stripped of root motion; `velocities` and
  // `angular_velocities` are its local ones; `root` is its simulation root. Foot and hip
  // velocities are world velocities (root motion included) rotated into the root's frame, from
  // forward kinematics of the local velocities and angular velocities. The same pass gives the
  // toes' world speeds, for the contacts, when `toe_speeds` is not null.
  std::vector<float> run(const RawClip& clip, const std::vector<glm::vec3>& velocities,
                         const std::vector<glm::vec3>& angular_velocities,
                         const std::vector<CookedRootFrame>& root, const SkeletonRoles& roles,
                         ToeSpeeds* toe_speeds = nullptr) const;
};

}  // namespace mmdb::cook
