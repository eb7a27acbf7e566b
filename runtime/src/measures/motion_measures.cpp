// The motion measures of a crowd run (docs/review.md "Motion measures").
#include "mmdb/motion_measures.h"

#include "mmdb/playback.h"

#include <algorithm>
#include <cmath>
#include <new>

namespace mmdb {
namespace {

constexpr double kMm = 1000.0;
constexpr float kDegrees = 3.14159265358979f / 180.f;

glm::vec2 ground(const glm::vec3& v) { return {v.x, v.z}; }

// The angle between two ground directions, radians; 0 when either vanishes.
float groundAngle(const glm::vec3& a, const glm::vec3& b) {
  const glm::vec2 x = ground(a), y = ground(b);
  const float lx = glm::length(x), ly = glm::length(y);
  if (!(lx > 1e-6f) || !(ly > 1e-6f)) return 0.f;
  return std::acos(std::clamp(glm::dot(x, y) / (lx * ly), -1.f, 1.f));
}

Distribution summarizeSamples(std::vector<double>& values) {
  Distribution d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (const double v : values) sum += v;
  d.mean = sum / double(values.size());
  auto at = [&](double q) { return values[size_t(q * double(values.size() - 1))]; };
  d.p50 = at(0.5);
  d.p90 = at(0.9);
  d.p95 = at(0.95);
  d.max = values.back();
  return d;
}

bool positiveFinite(float x) { return std::isfinite(x) && x > 0.f; }

}  // namespace

Result<MotionMeter> MotionMeter::create(const Crowd& crowd, const MotionMeasureSettings& settings) {
  if (crowd.characterCount() == 0)
    return Error(ErrorCode::InvalidArgument, "MotionMeter::create: the crowd is empty");
  const struct {
    const char* name;
    float value;
  } checked[] = {{"phase_drift_limit", settings.phase_drift_limit},
                 {"transition_window", settings.transition_window},
                 {"sharp_turn_degrees", settings.sharp_turn_degrees},
                 {"facing_tolerance_degrees", settings.facing_tolerance_degrees},
                 {"response_timeout", settings.response_timeout},
                 {"min_joint_step", settings.min_joint_step}};
  for (const auto& c : checked)
    if (!positiveFinite(c.value))
      return Error::format(ErrorCode::InvalidArgument,
                           "MotionMeter::create: %s %g must be finite and > 0", c.name,
                           double(c.value));

  const Database& db = crowd.database();
  MotionMeter m;
  m.db_ = &db;
  m.settings_ = settings;
  m.count_ = crowd.characterCount();
  m.joints_ = crowd.jointCount();
  m.controller_.position_halflife = crowd.settings().controller_halflife;
  m.controller_.rotation_halflife = crowd.settings().controller_halflife;
  const Span<const float> times = db.trajectoryTimes();
  for (int k = 0; k < kTrajectorySamples; ++k) {
    const float t =
        times.size() == size_t(kTrajectorySamples) ? times[size_t(k)] : m.controller_.times[k];
    m.controller_.times[k] = t;
    m.horizons_[size_t(k)] = t;
  }
  std::sort(m.horizons_.begin(), m.horizons_.end());
  for (const int32_t j : db.contactJoints())
    if (j >= 0 && uint32_t(j) < m.joints_) m.contact_joints_.push_back(uint32_t(j));

  try {
    // Each joint's largest move between consecutive frames of a clip, in model space.
    Result<std::vector<float>> steps = mmdb::clipJointSteps(db, crowd.poses());
    if (!steps) return steps.error();
    m.clip_joint_step_ = std::move(steps.value());

    m.characters_.resize(m.count_);
    for (Character& ch : m.characters_) {
      ch.model[0].assign(m.joints_, glm::vec3(0.f));
      ch.model[1].assign(m.joints_, glm::vec3(0.f));
      ch.toes.assign(m.contact_joints_.size(), Toe{});
    }
    m.clips_.assign(db.clipCount(), ClipSlide{});
    for (uint32_t i = 0; i < db.clipCount(); ++i) m.clips_[i].clip = i;
  } catch (const std::bad_alloc&) {
    return Error(ErrorCode::InvalidArgument, "MotionMeter::create: out of memory");
  }
  return Result<MotionMeter>(std::move(m));
}

void MotionMeter::reserve(uint64_t steps) {
  for (Character& ch : characters_) {
    ch.slide_mm.reserve(size_t(steps) * contact_joints_.size());
    ch.trajectory_m.reserve(size_t(steps));
    ch.controller_m.reserve(size_t(steps));
  }
}

Status MotionMeter::record(const Crowd& crowd, float dt) {
  if (db_ == nullptr) return Error(ErrorCode::InvalidArgument, "MotionMeter::record: no meter");
  if (crowd.characterCount() != count_ || &crowd.database() != db_)
    return Error::format(ErrorCode::InvalidArgument,
                         "MotionMeter::record: the crowd (%u characters) is not the one the "
                         "meter was made for (%u characters)",
                         crowd.characterCount(), count_);
  if (!positiveFinite(dt))
    return Error::format(ErrorCode::InvalidArgument,
                         "MotionMeter::record: dt %g s must be finite and > 0", double(dt));
  if (step_ == 0) {
    // The trajectory's horizons in steps of the first dt, as the replay counts them.
    dt_ = dt;
    for (size_t k = 0; k < horizons_.size(); ++k)
      horizon_steps_[k] = uint32_t(std::max(0L, std::lround(double(horizons_[k]) / double(dt))));
    ring_ = horizon_steps_.back() + 1;
    for (Character& ch : characters_) {
      ch.desired.assign(ring_, {});
      ch.error_sums.assign(ring_, 0.0);
    }
  }
  const Span<const uint32_t> contacts = db_->contacts();
  const Span<const glm::vec3> model = crowd.modelTranslations();
  const float rate = db_->frameRate();
  const float sharp = settings_.sharp_turn_degrees * kDegrees;
  const float tolerance = settings_.facing_tolerance_degrees * kDegrees;

  for (uint32_t c = 0; c < count_; ++c) {
    Character& ch = characters_[c];
    MotionMeasures& n = ch.counts;
    const CrowdCharacter& state = crowd.characters()[c];
    const Decision& decision = crowd.decisions()[c];
    const StickInput& input = crowd.inputs()[c];
    n.steps += 1;
    n.character_seconds += double(dt);
    if (decision.reason != SearchReason::None) n.searches += 1;
    if (decision.switched) {
      n.switches += 1;
      n.switches_by_reason[size_t(decision.reason) < 5 ? size_t(decision.reason) : 0] += 1;
    }
    n.continuations += decision.continued ? 1 : 0;
    n.held += decision.held ? 1 : 0;
    if (state.playing) {
      ch.controller_m.push_back(
          double(glm::length(ground(state.achieved_position) - ground(state.sim.position))));
      ch.adjusted_m += double(glm::length(ground(state.adjustment_world)));
      ch.adjusted_deg += double(std::fabs(state.adjustment_angle)) / double(kDegrees);
    }

    // Pose continuity: the move of each joint over this step, and over the last three.
    const Span<const glm::vec3> pose = model.subspan(size_t(c) * joints_, joints_);
    if (!state.playing) {
      ch.history = 0;
    } else {
      const int where = state.since_switch <= settings_.transition_window ? kAtSwitch : kElsewhere;
      if (ch.history >= 1) {
        for (uint32_t j = 0; j < joints_; ++j) {
          const double move = double(glm::length(pose[j] - ch.model[0][j]));
          const double allowed = std::max(double(clip_joint_step_[j]) * double(dt * rate),
                                          double(settings_.min_joint_step));
          n.max_joint_step_mm[where] = std::max(n.max_joint_step_mm[where], move * kMm);
          if (move / allowed > n.max_step_ratio[where]) {
            n.max_step_ratio[where] = move / allowed;
            n.worst_joint[where] = int32_t(j);
          }
          if (ch.history >= 2) {
            const glm::vec3 second = pose[j] - 2.f * ch.model[0][j] + ch.model[1][j];
            n.max_acceleration[where] =
                std::max(n.max_acceleration[where], double(glm::length(second)) / double(dt * dt));
          }
        }
      }
      std::swap(ch.model[0], ch.model[1]);
      std::copy(pose.begin(), pose.end(), ch.model[0].begin());
      ch.history = std::min(ch.history + 1, 2u);
    }

    // Planted toes, in the world: where the achieved transform after the step puts them.
    const uint32_t bits =
        state.playing && state.shown_frame < contacts.size() ? contacts[state.shown_frame] : 0u;
    const int32_t shown_clip = state.playing ? db_->clipOfFrame(state.shown_frame) : -1;
    for (size_t t = 0; t < ch.toes.size(); ++t) {
      Toe& toe = ch.toes[t];
      const glm::vec2 at =
          ground(state.achieved_position + state.achieved_rotation * pose[contact_joints_[t]]);
      const bool planted = (bits >> t) & 1u;
      if (planted && toe.planted) {
        ch.slide_mm.push_back(double(glm::length(at - toe.previous)) * kMm);
        toe.switched = toe.switched || decision.switched;
      } else if (planted) {
        toe.phase_open = true;
        // Planted in a switch's step or while its transition still ran (within
        // transition_window of it): the decaying offsets move the toe, not the clip.
        toe.switched = decision.switched || state.since_switch <= settings_.transition_window;
        toe.start = at;
        toe.clip = shown_clip >= 0 ? uint32_t(shown_clip) : 0;
      } else if (toe.planted && toe.phase_open) {
        // Lifted: its drift runs to where it was in the last step it stayed planted, so a switch
        // in this step does not enter.
        const double drift = double(glm::length(toe.previous - toe.start)) * kMm;
        ch.drift_mm.push_back(drift);
        const bool over = drift > double(settings_.phase_drift_limit) * kMm;
        n.phases_over_limit += over ? 1 : 0;
        ClipSlide& slide = clips_[toe.clip];
        if (toe.switched) {
          n.phases_across_switch += 1;
          n.phases_across_switch_over_limit += over ? 1 : 0;
          slide.across_phases += 1;
          slide.across_over_limit += over ? 1 : 0;
          slide.across_mean_drift_mm += drift;  // a sum until clipSlides()
          slide.across_max_drift_mm = std::max(slide.across_max_drift_mm, drift);
        } else {
          slide.phases += 1;
          slide.over_limit += over ? 1 : 0;
          slide.mean_drift_mm += drift;  // a sum until clipSlides()
          slide.max_drift_mm = std::max(slide.max_drift_mm, drift);
        }
        toe.phase_open = false;
      }
      if (!state.playing) toe.phase_open = false;
      toe.planted = planted;
      toe.previous = at;
    }

    // Responsiveness: a sharp turn of the desired facing starts the clock.
    const glm::vec3 facing = input.desired_facing;
    const bool facing_set = glm::length(ground(facing)) > 1e-6f;
    if (facing_set) {
      if (glm::length(ground(ch.last_facing)) > 1e-6f &&
          groundAngle(ch.last_facing, facing) > sharp) {
        if (ch.responding) n.responses_missed += 1;  // turned again before answering
        n.sharp_turns += 1;
        ch.responding = true;
        ch.response_elapsed = 0;
      }
      ch.last_facing = facing;
    }
    if (ch.responding) {
      ch.response_elapsed += double(dt);
      const glm::vec3 achieved = state.achieved_rotation * glm::vec3(0, 0, 1);
      if (groundAngle(achieved, ch.last_facing) <= tolerance) {
        ch.response_s.push_back(ch.response_elapsed);
        ch.responding = false;
      } else if (ch.response_elapsed > double(settings_.response_timeout)) {
        n.responses_missed += 1;
        ch.responding = false;
      }
    }

    // The trajectory: where the controller will be at each horizon, against where the character
    // is once the run gets there.
    std::array<glm::vec2, 3> desired{};
    for (size_t k = 0; k < horizons_.size(); ++k) {
      CharacterState future = state.sim;
      updateCharacter(future, input, controller_, horizons_[k]);
      desired[k] = ground(future.position);
    }
    const glm::vec2 achieved = ground(state.achieved_position);
    ch.desired[size_t(step_ % ring_)] = desired;
    for (size_t k = 0; k < horizons_.size(); ++k) {
      if (step_ < horizon_steps_[k]) continue;
      const size_t slot = size_t((step_ - horizon_steps_[k]) % ring_);
      ch.error_sums[slot] += double(glm::length(ch.desired[slot][k] - achieved));
      if (k + 1 == horizons_.size()) {
        ch.trajectory_m.push_back(ch.error_sums[slot] / double(horizons_.size()));
        ch.error_sums[slot] = 0.0;
      }
    }
  }
  step_ += 1;
  return Status();
}

MotionMeasures MotionMeter::summarize(const std::vector<const Character*>& characters) const {
  MotionMeasures m;
  std::vector<double> slide, drift, trajectory, response, controller;
  double adjusted_m = 0, adjusted_deg = 0;
  for (const Character* ch : characters) {
    const MotionMeasures& n = ch->counts;
    m.characters += 1;
    m.steps = std::max(m.steps, n.steps);
    m.character_seconds += n.character_seconds;
    m.phases_over_limit += n.phases_over_limit;
    m.phases_across_switch += n.phases_across_switch;
    m.phases_across_switch_over_limit += n.phases_across_switch_over_limit;
    for (int w = 0; w < 2; ++w) {
      m.max_joint_step_mm[w] = std::max(m.max_joint_step_mm[w], n.max_joint_step_mm[w]);
      if (n.max_step_ratio[w] > m.max_step_ratio[w]) {
        m.max_step_ratio[w] = n.max_step_ratio[w];
        m.worst_joint[w] = n.worst_joint[w];
      }
      m.max_acceleration[w] = std::max(m.max_acceleration[w], n.max_acceleration[w]);
    }
    m.searches += n.searches;
    m.switches += n.switches;
    for (size_t r = 0; r < m.switches_by_reason.size(); ++r)
      m.switches_by_reason[r] += n.switches_by_reason[r];
    m.continuations += n.continuations;
    m.held += n.held;
    m.sharp_turns += n.sharp_turns;
    m.responses_missed += n.responses_missed;
    slide.insert(slide.end(), ch->slide_mm.begin(), ch->slide_mm.end());
    drift.insert(drift.end(), ch->drift_mm.begin(), ch->drift_mm.end());
    trajectory.insert(trajectory.end(), ch->trajectory_m.begin(), ch->trajectory_m.end());
    response.insert(response.end(), ch->response_s.begin(), ch->response_s.end());
    controller.insert(controller.end(), ch->controller_m.begin(), ch->controller_m.end());
    adjusted_m += ch->adjusted_m;
    adjusted_deg += ch->adjusted_deg;
  }
  m.planted_slide_mm = summarizeSamples(slide);
  m.phase_drift_mm = summarizeSamples(drift);
  m.phase_share_over_limit =
      drift.empty() ? 0.0 : double(m.phases_over_limit) / double(m.phase_drift_mm.count);
  m.trajectory_error_m = summarizeSamples(trajectory);
  m.response_s = summarizeSamples(response);
  m.controller_distance_m = summarizeSamples(controller);
  m.adjustment_m_per_s = m.character_seconds > 0 ? adjusted_m / m.character_seconds : 0.0;
  m.adjustment_deg_per_s = m.character_seconds > 0 ? adjusted_deg / m.character_seconds : 0.0;
  m.switch_rate = m.character_seconds > 0 ? double(m.switches) / m.character_seconds : 0.0;
  return m;
}

MotionMeasures MotionMeter::total() const {
  std::vector<const Character*> all;
  for (const Character& ch : characters_) all.push_back(&ch);
  return summarize(all);
}

MotionMeasures MotionMeter::character(uint32_t character) const {
  if (character >= characters_.size()) return MotionMeasures{};
  return summarize({&characters_[character]});
}

std::vector<ClipSlide> MotionMeter::clipSlides() const {
  std::vector<ClipSlide> out;
  for (ClipSlide s : clips_) {
    if (s.phases == 0 && s.across_phases == 0) continue;
    if (s.phases > 0) s.mean_drift_mm /= double(s.phases);
    if (s.across_phases > 0) s.across_mean_drift_mm /= double(s.across_phases);
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(), [](const ClipSlide& a, const ClipSlide& b) {
    if (a.over_limit != b.over_limit) return a.over_limit > b.over_limit;
    if (a.mean_drift_mm != b.mean_drift_mm) return a.mean_drift_mm > b.mean_drift_mm;
    return a.across_over_limit > b.across_over_limit;
  });
  return out;
}

}  // namespace mmdb
