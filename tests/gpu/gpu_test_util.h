// Shared set-up of the GPU tests: one headless Vulkan context with the validation layer on (any
// validation message fails the test that caused it), synthetic databases, glm conversions.
#pragma once

#include "synthetic_database.h"

#include <mmdb/controller.h>
#include <mmdb/database.h>
#include <mmdb/gpu/crowd.h>

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace mmdb::test {

// The process-wide context; null when no Vulkan device exists (tests skip with the reason).
mmdb::gpu::Context* context();
const std::string& contextError();
std::vector<std::string>& validationMessages();

// A synthetic database in memory, opened by the runtime, with its GPU view.
struct TestDatabase {
  mmdb::test::AlignedBytes bytes;
  mmdb::Database db;
  mmdb::gpu::DatabaseView view;
};
// A synthetic skeleton with two legs (10 joints), for crowds that lock feet (the default).
inline mmdb::test::SyntheticSpec leggedSpec() {
  mmdb::test::SyntheticSpec spec;
  spec.joints = 10;
  spec.legs = true;
  return spec;
}

// coded_poses: the pose streams coded with the default budget (the upload decodes them);
// biases: the cost biases of setSyntheticBiases().
std::unique_ptr<TestDatabase> makeTestDatabase(const mmdb::test::SyntheticSpec& spec,
                                               bool coded_poses = false, bool biases = false);

// Fails on validation messages raised during the test; skips without a device.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

 private:
  size_t messages_before_ = 0;
};

inline glm::quat toQuat(const mmdb::Float4& q) { return glm::quat(q.w, q.x, q.y, q.z); }
inline glm::vec3 toVec3(const mmdb::Float4& v) { return glm::vec3(v.x, v.y, v.z); }
inline mmdb::Float4 toFloat4(const glm::quat& q) { return {q.x, q.y, q.z, q.w}; }
inline mmdb::Float4 toFloat4(const glm::vec3& v, float w = 0) { return {v.x, v.y, v.z, w}; }

// The value of a Result or Status the test needs: fails the test (and gives a default value) when
// it is an error.
template <class T>
T valueOf(mmdb::Result<T> result) {
  if (!result) {
    ADD_FAILURE() << mmdb::errorCodeName(result.error().code()) << ": " << result.error().message();
    return T{};
  }
  return std::move(result).value();
}

// Max component difference of two quaternions taken on the same hemisphere.
float quatDistance(const glm::quat& a, const glm::quat& b);
float vecDistance(const glm::vec3& a, const glm::vec3& b);

}  // namespace mmdb::test
