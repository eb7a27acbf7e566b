#include "cli/streamed_database.h"

#include "core/errors.h"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cerrno>
#include <exception>
#include <functional>

namespace mmdb::cook {

std::unique_ptr<StreamedDatabaseFile> StreamedDatabaseFile::open(const std::string& path,
                                                                 const CookRequest& request,
                                                                 int jobs, bool release_poses) {
  if (request.settings.compression.pose != CompressionSettings::Pose::None) return nullptr;
  std::optional<std::vector<uint32_t>> frames = declaredClipFrames(request, jobs);
  if (!frames) return nullptr;
  std::vector<int> first_clip;
  int clips = 0;
  // Biases that add up to 0 everywhere give a file without them: the layout then does not hold
  // and the poses are written with the rest.
  bool biases = false;
  for (const ClipSpec& spec : request.clips) {
    first_clip.push_back(clips);
    clips += spec.mirror ? 2 : 1;
    biases = biases || spec.bias != 0;
    for (const SubRangeSpec& r : spec.ranges) biases = biases || r.bias != 0;
  }
  return std::make_unique<StreamedDatabaseFile>(path, std::move(*frames), std::move(first_clip),
                                                biases, release_poses);
}

StreamedDatabaseFile::StreamedDatabaseFile(const std::string& path,
                                           std::vector<uint32_t> clip_frames,
                                           std::vector<int> first_clip_of_spec, bool range_biases,
                                           bool release_poses)
    : file_(path),
      clip_frames_(std::move(clip_frames)),
      first_clip_of_spec_(std::move(first_clip_of_spec)),
      range_biases_(range_biases),
      release_poses_(release_poses),
      motions_(clip_frames_.size(), nullptr) {
  for (const uint32_t f : clip_frames_) frame_count_ += f;
}

void StreamedDatabaseFile::start(uint32_t joint_count) {
  joint_count_ = joint_count;
  const uint64_t pose_bytes = frame_count_ * joint_count * kPoseStreamCount * 16;
  if (pose_bytes < kMinimumPoseBytes || frame_count_ > UINT32_MAX || joint_count == 0) return;
  // Called on the thread that copied clip c, after every partObtained() that gave it.
  std::function<void(int)> release;
  if (release_poses_)
    release = [this](int c) {
      if (ClipMotion* m = motions_[size_t(c)]) {
        std::vector<glm::quat>().swap(m->clip.rotations);
        std::vector<glm::vec3>().swap(m->clip.translations);
        std::vector<glm::vec3>().swap(m->velocities);
        std::vector<glm::vec3>().swap(m->angular_velocities);
        ++released_;
      }
    };
  try {
    layout_ = rawPoseLayout(static_cast<uint32_t>(frame_count_), joint_count, range_biases_);
    writer_ = std::make_unique<PoseStreamWriter>(file_.fd(), layout_, clip_frames_, joint_count,
                                                 std::move(release));
  } catch (const std::exception& e) {  // no memory or no thread: the poses go with the rest
    spdlog::debug("the poses are written after the cook: {}", e.what());
    writer_.reset();
  }
}

void StreamedDatabaseFile::partObtained(int index, ClipPart& part, bool cooked) {
  const auto joints = static_cast<uint32_t>(part.skeleton.names.size());
  std::call_once(started_, [&] { start(joints); });
  if (!writer_ || index < 0 || size_t(index) >= first_clip_of_spec_.size()) return;
  int clip = first_clip_of_spec_[size_t(index)];
  for (ClipMotion* m : {&part.motion, part.mirror ? &*part.mirror : nullptr}) {
    if (!m) continue;
    const size_t frames = size_t(m->clip.frame_count), values = frames * joints;
    const bool whole = cooked && joints == joint_count_ && m->clip.rotations.size() == values &&
                       m->clip.translations.size() == values && m->velocities.size() == values &&
                       m->angular_velocities.size() == values;
    PoseStreamWriter::ClipPoses poses;
    poses.frames = frames;
    poses.rotations = m->clip.rotations.data();
    poses.translations = m->clip.translations.data();
    poses.velocities = m->velocities.data();
    poses.angular_velocities = m->angular_velocities.data();
    if (whole) motions_[size_t(clip)] = m;  // before the writer may release it
    writer_->clipReady(clip++, whole ? &poses : nullptr);
    if (whole) ++streamed_;
  }
}

bool StreamedDatabaseFile::commit(const SerializedDatabase& bytes) {
  std::vector<FileRange> written;
  bool around = writer_ && writer_->finish(written);
  const int write_error = writer_ ? writer_->writeError() : 0;
  writer_.reset();
  // The disk refused the poses: writing them again would fail as well.
  if (write_error != 0 && released()) file_.fail("writing the temporary file failed", write_error);
  for (int s = 0; around && s < kPoseStreamCount; ++s) {
    size_t offset = 0, count = 0;
    around = bytes.rawStreamAt(s, &offset, &count) && offset == layout_.offsets[size_t(s)] &&
             count == frame_count_ * joint_count_;
  }
  if (around) {
    spdlog::debug("{} of {} clips' poses were written while the clips cooked", streamed_.load(),
                  clip_frames_.size());
  } else {
    if (streamed_ > 0)
      spdlog::debug(
          "the database's layout is not the one its poses were written for: writing "
          "them again");
    if (released()) return false;
    written.clear();  // the whole file again, over what was written, cut to its size
  }
  if (!bytes.writeAround(file_.fd(), written) ||
      (!around && ::ftruncate(file_.fd(), off_t(bytes.size())) != 0))
    file_.fail("writing the temporary file failed", errno);
  file_.commit();
  return true;
}

}  // namespace mmdb::cook
