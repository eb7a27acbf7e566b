// The in-memory clip every importer produces and every cook stage reads: plain data on vectors.
#pragma once

#include "core/warning.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <string>
#include <vector>

namespace mmdb::cook {

// A joint hierarchy. Rules (checked by validateSkeleton):
//  1. names, parents, offsets and bind_rotations have the same length, at least 1;
//  2. parents[j] < j (a parent precedes its children), parents[0] == -1, only the first is a root;
//  3. names are unique and non-empty.
struct Skeleton {
  std::vector<std::string> names;
  std::vector<int> parents;
  std::vector<glm::vec3> offsets;         // local bind translations, in source units until scaled
  std::vector<glm::quat> bind_rotations;  // local bind rotations (identity for BVH)

  int jointCount() const { return static_cast<int>(names.size()); }
  int find(const std::string& name) const;  // -1 when absent
};

// One clip of motion in local joint space. Element [frame * jointCount + joint].
struct RawClip {
  std::string name;         // clip name (manifest name or file stem)
  std::string source_path;  // the file it came from, for messages
  std::string take;         // animation name in multi-take sources, else ""
  Skeleton skeleton;
  double frame_rate = 0.0;  // frames per second
  int frame_count = 0;
  int source_first_frame = 0;  // first source frame kept (after a manifest's range)
  // Metres per unit when the file declares it (FBX UnitScaleFactor); 0 when it does not (BVH),
  // and the cook takes the scale from the manifest, the preset or the standing hip height.
  double declared_unit_scale = 0.0;
  std::vector<glm::quat> rotations;
  std::vector<glm::vec3> translations;
  std::vector<Warning> warnings;  // the importer's, about the file (the cook reports them)

  const glm::quat& rotation(int frame, int joint) const {
    return rotations[static_cast<size_t>(frame) * skeleton.names.size() + joint];
  }
  const glm::vec3& translation(int frame, int joint) const {
    return translations[static_cast<size_t>(frame) * skeleton.names.size() + joint];
  }
};

// Throws InputError naming `what` (a file or clip) when a rule above is broken.
void validateSkeleton(const Skeleton& skeleton, const std::string& what);

}  // namespace mmdb::cook
