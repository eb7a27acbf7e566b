// Where the character is against where gameplay thinks it is. The controller's simulation root is
// the game's capsule; the character is placed by the root motion of the frames it plays. Each
// step, after the root motion, one of them follows the other (docs/runtime.md "Keeping the
// character on its controller"):
//
//   CharacterFollows   the step's root motion is warped towards the controller's velocity (the
//                      stride shortened, the way turned; the feet mapped with it), then the
//                      character's placement moves towards the simulation root by a damped
//                      adjustment (position and rotation half-lives), at most a share of the
//                      step's own root motion (so the correction hides inside the motion), kept
//                      from carrying a planted toe's animated position further than foot_reach
//                      from its lock; past max_distance the way back joins it (the feet still
//                      holding it back), and past hard_distance and max_angle of the root a clamp
//                      puts the character on their edge
//   ControllerFollows  the simulation root becomes the character's placement (the root motion
//                      is the truth: gameplay follows the animation)
//   None               neither: the character goes by root motion alone
//
// Play-rate matching (rate_min, rate_max; off by default) plays the clip faster or slower
// towards the controller's speed, in both modes but None.
//
// Both crowds (mmdb::Crowd and mmdb::gpu::Crowd) run the same rule, the GPU's in its fk pass.
#pragma once

#include "mmdb/result.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <cstdint>

namespace mmdb {

enum class Synchronization : uint32_t {
  None = 0,               // root motion alone (what reference() keeps)
  CharacterFollows = 1,   // the character is adjusted towards the controller (default)
  ControllerFollows = 2,  // the controller's simulation root is put on the character
};

// The settings of the synchronization, the same in both crowds (CrowdSettings::synchronization).
// Defaults: the adjustment of Holden's reference controller.
struct SynchronizationSettings {
  Synchronization mode = Synchronization::CharacterFollows;
  float position_halflife = 0.1f;  // s, > 0: the gap in position closes by half in this time ...
  float rotation_halflife = 0.2f;  // s, > 0: ... and the gap in facing
  float position_ratio = 0.5f;     // >= 0: a step adjusts the position by at most this times the
                                   // distance its root motion moved (0: no damped adjustment)
  float rotation_ratio = 0.5f;     // >= 0: ... and the facing by at most this times its turn
  float max_distance = 0.15f;      // m, >= 0: past this from the simulation root (on the
                                   // ground) the character is brought back to it, as far as
                                   // its locked toes allow (foot_reach) ...
  float hard_distance = 0.15f;     // m, >= 0: ... and never further than this, feet or not
                                   // (Holden's clamp: 0.15 m; above max_distance, the feet may
                                   // keep the character further for a while)
  float max_angle = 1.5707964f;    // rad, 0 to pi: ... nor turned further from its facing
  // Play-rate matching (in both modes but None): the clip plays at the controller's speed over
  // the clip's root speed, within [rate_min, rate_max] and to 1/64, its clock and root motion
  // alike, so its feet stay planted while its speed follows the stick's; a clip whose root moves
  // slower than 0.1 m/s plays at 1. rate_min = rate_max = 1: off.
  float rate_min = 1.f;     // > 0
  float rate_max = 1.f;     // >= rate_min, at most 4
  float foot_reach = 0.1f;  // m, >= 0: the damped adjustment never carries a locked toe's
                            // animated position further than this from its lock, nor
                            // further than it already was (the clamp may)
  // Warping (in CharacterFollows): the step's root motion and the feet's ground positions around
  // the root are mapped by one ground-plane transform, so that the root goes where the controller
  // wants it and planted feet stay planted: the stride scaled along the clip's direction of travel
  // within [stride_min, stride_max] (stride warping; both 1: off) and the direction of travel
  // turned by at most warp_angle (orientation warping; 0: off). The transform eases towards each
  // step's aim with warp_halflife; the foot lock bends the legs (IK) to put the feet where it maps
  // them (with foot locking off, only the root motion is warped). Defaults: strides shortened down
  // to standing, never lengthened, turned up to 22.5 degrees (what measured best on three
  // databases; docs/runtime.md "Warping").
  float stride_min = 0.f;          // >= 0, at most 1
  float stride_max = 1.f;          // >= 1, at most 4
  float warp_angle = 0.39269908f;  // rad, 0 to pi/2
  float warp_halflife = 0.1f;      // s, > 0
};

// The ground-plane map of warping in the character's frame, column-major (x, z): identity when
// off. A model-space point p goes to (m * (p.x, p.z), p.y).
struct GroundWarp {
  float xx = 1.f, zx = 0.f, xz = 0.f, zz = 1.f;  // m[0] = (xx, zx) is the image of +X
  bool identity() const noexcept { return xx == 1.f && zx == 0.f && xz == 0.f && zz == 1.f; }
  glm::vec3 apply(const glm::vec3& p) const noexcept {
    return {xx * p.x + xz * p.z, p.y, zx * p.x + zz * p.z};
  }
};

// Whether warping is on (CharacterFollows with a stride bound or warp angle set).
bool warpingOn(const SynchronizationSettings& settings) noexcept;

// One step of warping for one character: eases `warp` towards the transform that maps the clip's
// root velocity (model space) onto the velocity the controller wants of the character (model
// space: the simulation's velocity plus the gap closing with position_halflife): the clip's way
// turned towards the wanted one by at most warp_angle, then its stride scaled to the wanted speed
// along the turned way, within [stride_min, stride_max]. The aim is continuous: the turn fades out
// for a wanted velocity under 0.1 m/s or more than 135 degrees behind, and the whole map fades to
// the identity for a clip root slower than 0.1 m/s (none under 0.05). Identity when warping is
// off.
void stepGroundWarp(const SynchronizationSettings& settings, float dt,
                    const glm::vec3& clip_velocity, const glm::vec3& wanted_velocity,
                    GroundWarp& warp) noexcept;

// InvalidArgument naming the setting (prefixed with `what`) for an unknown mode or a value that is
// negative or not finite (a half-life of 0, an angle over pi).
Status validateSynchronization(const char* what, const SynchronizationSettings& s) noexcept;

// One character's step of CharacterFollows: its placement after the step's root motion, moved
// towards the simulation root. Only the turn about +Y of the rotations counts.
struct AdjustmentJob {
  SynchronizationSettings settings;
  float dt = 0;                 // s, > 0 (0: nothing moves)
  glm::vec3 root_motion{0.f};   // the step's root motion, world
  float root_turn = 0;          // ... and its turn, rad
  glm::vec3 sim_position{0.f};  // the controller's simulation root
  glm::quat sim_rotation{1.f, 0.f, 0.f, 0.f};
  uint32_t locked_legs = 0;  // bit per leg: its toe is held at locks[leg]
  glm::vec3 locks[2]{};      // world
  glm::vec3 toes[2]{};       // the animated toes in model space
  // In: the placement after the root motion; out: adjusted.
  glm::vec3 position{0.f};
  glm::quat rotation{1.f, 0.f, 0.f, 0.f};
  // Out: how far the adjustment moved the placement (world) and turned it (rad about +Y).
  glm::vec3 moved{0.f};
  float turned = 0;

  void Run() noexcept;
};

// The rate a clip plays at (SynchronizationSettings::rate_min, rate_max): the ground speed of
// `sim_velocity` over that of `clip_velocity` (the frame's root velocity), clamped and rounded to
// 1/64; 1 with Synchronization::None, with both bounds 1, or for a clip root under 0.1 m/s.
float playRate(const SynchronizationSettings& settings, const glm::vec3& clip_velocity,
               const glm::vec3& sim_velocity) noexcept;

// The turn about +Y of a pure-yaw rotation, in (-pi, pi].
float yawAngle(const glm::quat& yaw) noexcept;

}  // namespace mmdb
