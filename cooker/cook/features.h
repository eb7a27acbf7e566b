// Matching features (docs/cook.md "Features"): 27 floats per frame in the simulation root's
// frame, in seven blocks.
#pragma once

#include "cook/skeleton_presets.h"
#include "core/cook_settings.h"
#include "core/cooked_database.h"
#include "core/raw_clip.h"

#include <array>
#include <vector>

namespace mm {

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
  std::array<int, 3> trajectory_frames{20, 40, 60};  // future samples, frames at the clip's rate

  // Raw features, kFeatureCount per frame. `clip` is stripped of root motion; `velocities` and
  // `angular_velocities` are its local ones; `root` is its simulation root. Foot and hip
  // velocities are world velocities (root motion included) rotated into the root's frame.
  std::vector<float> run(const RawClip& clip, const std::vector<glm::vec3>& velocities,
                         const std::vector<glm::vec3>& angular_velocities,
                         const std::vector<CookedRootFrame>& root,
                         const SkeletonRoles& roles) const;
};

}  // namespace mm
