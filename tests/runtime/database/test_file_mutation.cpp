// Structured mutation of .mmdb files: every field of every table made absent, counts and indices
// set out of range, NaN and inf put in every float array. Each mutated file goes through
// everything that reads a database: Database::open, both searches, buildQuery and pose sampling,
// `mmcook inspect` as text and as JSON (in this process), and the sample program. Nothing may
// crash or trip a sanitizer; a file the runtime refuses is refused with a reason, and a file it
// opens is usable (the searches return a frame or NoMatch, the sample exits 0 or 1, never 3).
#include "synthetic_database.h"

#include "cli/inspect.h"
#include "compress/pose_compression.h"
#include "core/errors.h"

#include <mmdb/controller.h>
#include <mmdb/database.h>
#include <mmdb/mmdb_generated.h>
#include <mmdb/playback.h>
#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fb = mmdb::fb;
namespace fs = std::filesystem;
using flatbuffers::voffset_t;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A mutation edits a fresh, valid copy of the file in place.
struct Mutation {
  std::string name;
  std::function<void(uint8_t* bytes)> apply;
};

const flatbuffers::Table* asTable(const void* table) {
  return reinterpret_cast<const flatbuffers::Table*>(table);
}
flatbuffers::Table* mutableTable(const void* table) {
  return reinterpret_cast<flatbuffers::Table*>(const_cast<void*>(table));
}

// Number of field slots in a table's vtable.
voffset_t fieldCount(const void* table) {
  const uint8_t* vtable = asTable(table)->GetVTable();
  return voffset_t((flatbuffers::ReadScalar<voffset_t>(vtable) - 4) / 2);
}

// Makes field `index` (schema order) of `table` absent: its vtable entry becomes 0, as if the
// writer had never written it. A vtable shared with other tables loses the field in all of them.
void removeField(const void* table, voffset_t index) {
  uint8_t* vtable = const_cast<uint8_t*>(asTable(table)->GetVTable());
  flatbuffers::WriteScalar<voffset_t>(vtable + 4 + 2 * index, 0);
}

template <class T>
void setField(const void* table, voffset_t field, T value) {
  ASSERT_TRUE(mutableTable(table)->SetField<T>(field, value, T{})) << "field " << field;
}

template <class T>
T* mutableData(const flatbuffers::Vector<T>* v) {
  return const_cast<T*>(v->data());
}

const fb::Database* rootOf(uint8_t* bytes) { return fb::GetDatabase(bytes); }

// The tables whose fields are removed one at a time, located in a fresh copy.
struct TableRef {
  const char* name;
  std::function<const void*(const fb::Database&)> locate;
};
const TableRef kTables[] = {
    {"Database", [](const fb::Database& db) -> const void* { return &db; }},
    {"CookSettings", [](const fb::Database& db) -> const void* { return db.settings(); }},
    {"Skeleton", [](const fb::Database& db) -> const void* { return db.skeleton(); }},
    {"Source", [](const fb::Database& db) -> const void* { return db.sources()->Get(0); }},
    {"Clip", [](const fb::Database& db) -> const void* { return db.clips()->Get(0); }},
    {"FeatureBlock",
     [](const fb::Database& db) -> const void* { return db.feature_blocks()->Get(0); }},
    {"RoleBinding",
     [](const fb::Database& db) -> const void* { return db.skeleton()->roles()->Get(0); }},
};

void addAbsentFields(const uint8_t* valid, std::vector<Mutation>& out) {
  for (const TableRef& table : kTables) {
    const voffset_t fields = fieldCount(table.locate(*fb::GetDatabase(valid)));
    for (voffset_t f = 0; f < fields; ++f) {
      out.push_back(
          {std::string(table.name) + " field " + std::to_string(f) + " absent",
           [&table, f](uint8_t* bytes) { removeField(table.locate(*rootOf(bytes)), f); }});
    }
  }
}

// A float array: NaN, then inf, in its first and its middle element.
template <class Locate>
void addNonFinite(const std::string& name, Locate locate, std::vector<Mutation>& out) {
  for (float bad : {kNaN, kInf, -kInf}) {
    for (bool middle : {false, true}) {
      out.push_back({name + (middle ? "[middle] = " : "[0] = ") + std::to_string(bad),
                     [locate, bad, middle](uint8_t* bytes) {
                       const auto [data, count] = locate(*rootOf(bytes));
                       if (count > 0) data[middle ? count / 2 : 0] = bad;
                     }});
    }
  }
}

template <class T>
std::pair<float*, size_t> floats(const flatbuffers::Vector<T>* v) {
  return {reinterpret_cast<float*>(const_cast<T*>(v->data())), v->size() * sizeof(T) / 4};
}

void addNonFiniteArrays(std::vector<Mutation>& out) {
  addNonFinite(
      "features", [](const fb::Database& db) { return floats(db.features()); }, out);
  addNonFinite(
      "feature_offset", [](const fb::Database& db) { return floats(db.feature_offset()); }, out);
  addNonFinite(
      "feature_scale", [](const fb::Database& db) { return floats(db.feature_scale()); }, out);
  addNonFinite(
      "bounds_small_min", [](const fb::Database& db) { return floats(db.bounds_small_min()); },
      out);
  addNonFinite(
      "bounds_small_max", [](const fb::Database& db) { return floats(db.bounds_small_max()); },
      out);
  addNonFinite(
      "bounds_large_min", [](const fb::Database& db) { return floats(db.bounds_large_min()); },
      out);
  addNonFinite(
      "bounds_large_max", [](const fb::Database& db) { return floats(db.bounds_large_max()); },
      out);
  addNonFinite(
      "local_rotations", [](const fb::Database& db) { return floats(db.local_rotations()); }, out);
  addNonFinite(
      "local_translations", [](const fb::Database& db) { return floats(db.local_translations()); },
      out);
  addNonFinite(
      "local_velocities", [](const fb::Database& db) { return floats(db.local_velocities()); },
      out);
  addNonFinite(
      "local_angular_velocities",
      [](const fb::Database& db) { return floats(db.local_angular_velocities()); }, out);
  addNonFinite(
      "root_motion", [](const fb::Database& db) { return floats(db.root_motion()); }, out);
  addNonFinite(
      "settings.trajectory_times",
      [](const fb::Database& db) { return floats(db.settings()->trajectory_times()); }, out);
  addNonFinite(
      "settings.block_weights",
      [](const fb::Database& db) { return floats(db.settings()->block_weights()); }, out);
  addNonFinite(
      "skeleton.bind_translations",
      [](const fb::Database& db) { return floats(db.skeleton()->bind_translations()); }, out);
  addNonFinite(
      "skeleton.bind_rotations",
      [](const fb::Database& db) { return floats(db.skeleton()->bind_rotations()); }, out);
  addNonFinite(
      "skeleton.facing_axis",
      [](const fb::Database& db) {
        return std::pair<float*, size_t>(
            reinterpret_cast<float*>(const_cast<fb::Vec4*>(db.skeleton()->facing_axis())), 3);
      },
      out);
}

// Scalars of the tables, each set to values outside what the file's counts allow.
void addScalars(const fb::Database& valid, std::vector<Mutation>& out) {
  const uint32_t frames = valid.frame_count(), joints = valid.joint_count();
  const uint32_t clips = valid.clips()->size();
  const uint16_t n = valid.feature_count();
  auto add = [&](const std::string& name, std::function<void(uint8_t*)> apply) {
    out.push_back({name, std::move(apply)});
  };
  auto root = [](uint8_t* b) -> const void* { return rootOf(b); };
  for (float v : {0.f, -1.f, 1e-45f, 0.5f, 1e30f, kNaN, kInf})
    add("frame_rate = " + std::to_string(v),
        [=](uint8_t* b) { setField<float>(root(b), fb::Database::VT_FRAME_RATE, v); });
  for (uint32_t v : {0u, frames - 1, frames + 1, 0xffffffffu})
    add("frame_count = " + std::to_string(v),
        [=](uint8_t* b) { setField<uint32_t>(root(b), fb::Database::VT_FRAME_COUNT, v); });
  for (uint32_t v : {0u, joints + 1, 0xffffffffu})
    add("joint_count = " + std::to_string(v),
        [=](uint8_t* b) { setField<uint32_t>(root(b), fb::Database::VT_JOINT_COUNT, v); });
  for (uint16_t v : {uint16_t(0), uint16_t(n + 1), uint16_t(0xffff)})
    add("feature_count = " + std::to_string(v),
        [=](uint8_t* b) { setField<uint16_t>(root(b), fb::Database::VT_FEATURE_COUNT, v); });
  for (uint16_t v : {uint16_t(0), uint16_t(n - 1), uint16_t(n + 5), uint16_t(0xffff)})
    add("feature_stride = " + std::to_string(v),
        [=](uint8_t* b) { setField<uint16_t>(root(b), fb::Database::VT_FEATURE_STRIDE, v); });
  for (uint16_t v : {uint16_t(0), uint16_t(1), uint16_t(0xffff)}) {
    add("bounds_small_size = " + std::to_string(v),
        [=](uint8_t* b) { setField<uint16_t>(root(b), fb::Database::VT_BOUNDS_SMALL_SIZE, v); });
    add("bounds_large_size = " + std::to_string(v),
        [=](uint8_t* b) { setField<uint16_t>(root(b), fb::Database::VT_BOUNDS_LARGE_SIZE, v); });
  }

  for (uint32_t c : {0u, clips - 1}) {
    auto clip = [c](uint8_t* b) -> const void* { return rootOf(b)->clips()->Get(c); };
    const std::string p = "clips[" + std::to_string(c) + "].";
    for (int32_t v : {-2, -1, 1, 0x7fffffff})
      add(p + "source_index = " + std::to_string(v),
          [=](uint8_t* b) { setField<int32_t>(clip(b), fb::Clip::VT_SOURCE_INDEX, v); });
    for (int32_t v : {-2, int32_t(c), int32_t(clips), 0x7fffffff})
      add(p + "mirror_of = " + std::to_string(v),
          [=](uint8_t* b) { setField<int32_t>(clip(b), fb::Clip::VT_MIRROR_OF, v); });
    for (uint32_t v : {1u, frames, 0xffffffffu})
      add(p + "first_frame = " + std::to_string(v),
          [=](uint8_t* b) { setField<uint32_t>(clip(b), fb::Clip::VT_FIRST_FRAME, v); });
    for (uint32_t v : {0u, 1u, frames + 1, 0xffffffffu})
      add(p + "frame_count = " + std::to_string(v),
          [=](uint8_t* b) { setField<uint32_t>(clip(b), fb::Clip::VT_FRAME_COUNT, v); });
    for (uint64_t v : {uint64_t{1} << 63, ~uint64_t{0}})
      add(p + "tag_mask = " + std::to_string(v),
          [=](uint8_t* b) { setField<uint64_t>(clip(b), fb::Clip::VT_TAG_MASK, v); });
    for (float v : {-1.f, kNaN, kInf})
      add(p + "source_frame_rate = " + std::to_string(v),
          [=](uint8_t* b) { setField<float>(clip(b), fb::Clip::VT_SOURCE_FRAME_RATE, v); });
    add(p + "source_frame_count = max", [=](uint8_t* b) {
      setField<uint32_t>(clip(b), fb::Clip::VT_SOURCE_FRAME_COUNT, 0xffffffffu);
    });
  }

  for (uint32_t k : {0u, valid.feature_blocks()->size() - 1}) {
    auto block = [k](uint8_t* b) -> const void* { return rootOf(b)->feature_blocks()->Get(k); };
    const std::string p = "feature_blocks[" + std::to_string(k) + "].";
    for (int8_t v :
         {int8_t(-1), int8_t(0), int8_t(1), int8_t(2), int8_t(3), int8_t(4), int8_t(127)})
      add(p + "kind = " + std::to_string(v),
          [=](uint8_t* b) { setField<int8_t>(block(b), fb::FeatureBlock::VT_KIND, v); });
    for (int32_t v : {-2, -1, int32_t(joints), 0x7fffffff})
      add(p + "joint = " + std::to_string(v),
          [=](uint8_t* b) { setField<int32_t>(block(b), fb::FeatureBlock::VT_JOINT, v); });
    for (uint16_t v : {uint16_t(n), uint16_t(0xffff)})
      add(p + "first_column = " + std::to_string(v),
          [=](uint8_t* b) { setField<uint16_t>(block(b), fb::FeatureBlock::VT_FIRST_COLUMN, v); });
    for (uint16_t v : {uint16_t(0), uint16_t(2), uint16_t(6), uint16_t(0xffff)})
      add(p + "width = " + std::to_string(v),
          [=](uint8_t* b) { setField<uint16_t>(block(b), fb::FeatureBlock::VT_WIDTH, v); });
    for (float v : {kNaN, kInf}) {
      add(p + "std = " + std::to_string(v),
          [=](uint8_t* b) { setField<float>(block(b), fb::FeatureBlock::VT_STD, v); });
      add(p + "weight = " + std::to_string(v),
          [=](uint8_t* b) { setField<float>(block(b), fb::FeatureBlock::VT_WEIGHT, v); });
    }
  }

  auto role = [](uint8_t* b) -> const void* { return rootOf(b)->skeleton()->roles()->Get(0); };
  for (int32_t v : {-2, int32_t(joints), 0x7fffffff})
    add("roles[0].joint = " + std::to_string(v),
        [=](uint8_t* b) { setField<int32_t>(role(b), fb::RoleBinding::VT_JOINT, v); });
  for (int8_t v : {int8_t(-1), int8_t(7), int8_t(127)})
    add("roles[0].role = " + std::to_string(v),
        [=](uint8_t* b) { setField<int8_t>(role(b), fb::RoleBinding::VT_ROLE, v); });
  auto settings = [](uint8_t* b) -> const void* { return rootOf(b)->settings(); };
  for (uint16_t v : {uint16_t(0), uint16_t(0xffff)}) {
    add("settings.root_position_window = " + std::to_string(v), [=](uint8_t* b) {
      setField<uint16_t>(settings(b), fb::CookSettings::VT_ROOT_POSITION_WINDOW, v);
    });
    add("settings.trailing_unmatchable_frames = " + std::to_string(v), [=](uint8_t* b) {
      setField<uint16_t>(settings(b), fb::CookSettings::VT_TRAILING_UNMATCHABLE_FRAMES, v);
    });
  }
  for (float v : {0.f, -1.f, kNaN})
    add("settings.unit_scale = " + std::to_string(v),
        [=](uint8_t* b) { setField<float>(settings(b), fb::CookSettings::VT_UNIT_SCALE, v); });

  // Vector elements: parents, contact joints, contact masks, trajectory times, ranges.
  for (int32_t v : {-2, 1, int32_t(joints), 0x7fffffff})
    add("skeleton.parents[1] = " + std::to_string(v),
        [=](uint8_t* b) { mutableData(rootOf(b)->skeleton()->parents())[1] = v; });
  for (int32_t v : {-1, int32_t(joints)})
    add("skeleton.contact_joints[0] = " + std::to_string(v),
        [=](uint8_t* b) { mutableData(rootOf(b)->skeleton()->contact_joints())[0] = v; });
  add("contacts[0] = all bits", [=](uint8_t* b) { mutableData(rootOf(b)->contacts())[0] = ~0u; });
  for (float v : {0.f, -1.f, 5.f})
    add("settings.trajectory_times[1] = " + std::to_string(v),
        [=](uint8_t* b) { mutableData(rootOf(b)->settings()->trajectory_times())[1] = v; });
  const uint32_t ranges = valid.ranges()->size();
  for (uint32_t r : {0u, ranges - 1}) {
    const std::string p = "ranges[" + std::to_string(r) + "].";
    auto range = [r](uint8_t* b) {
      return reinterpret_cast<mmdb::MatchRange*>(
          const_cast<fb::MatchRange*>(rootOf(b)->ranges()->Get(r)));
    };
    for (uint32_t v : {0u, frames - 1, frames, 0xffffffffu})
      add(p + "first_frame = " + std::to_string(v), [=](uint8_t* b) { range(b)->first_frame = v; });
    for (uint32_t v : {0u, frames, 0xffffffffu})
      add(p + "frame_count = " + std::to_string(v), [=](uint8_t* b) { range(b)->frame_count = v; });
    add(p + "frame_count spans two clips", [=](uint8_t* b) { range(b)->frame_count += 40; });
    add(p + "tag_mask = bit 63", [=](uint8_t* b) { range(b)->tag_mask |= uint64_t{1} << 63; });
  }
}

// Used by the sample-program checks (MMDB_SAMPLE_PATH), which a build without samples leaves out.
[[maybe_unused]] std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class FileMutation : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("mmdb_file_mutation_" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    mmdb::test::SyntheticSpec spec;
    spec.clips = 3;
    spec.frames_per_clip = 70;
    spec.joints = 4;
    valid_ = mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(spec));
  }
  void TearDown() override { fs::remove_all(folder_); }

  // What a game does with an opened database; every call must return, ok or with a reason.
  void exercise(const mmdb::Database& db, const std::string& name) {
    std::vector<float> query(db.featureCount(), 0.25f);
    float trajectory[mmdb::kTrajectoryFloats] = {};
    (void)mmdb::buildQuery(db, 0, trajectory, mmdb::Span<float>(query));
    for (float& q : query)
      if (!std::isfinite(q)) q = 0;
    for (int32_t current : {-1, int32_t(db.frameCount() / 2)}) {
      mmdb::SearchRequest request;
      request.query = query;
      request.current_frame = current;
      for (auto* search : {&mmdb::searchExhaustive, &mmdb::searchPruned}) {
        const auto found = search(db, request);
        if (found.ok()) {
          EXPECT_GE(found.value().frame, 0) << name;
          EXPECT_TRUE(std::isfinite(found.value().cost)) << name;
        } else {
          EXPECT_EQ(found.error().code(), mmdb::ErrorCode::NoMatch)
              << name << ": " << found.error().message();
        }
      }
    }
    std::vector<glm::quat> rotations(db.jointCount());
    std::vector<glm::vec3> translations(db.jointCount());
    // A coded file decodes (or refuses its damaged data) before it samples.
    std::vector<mmdb::Float4> decoded[mmdb::kPoseStreamCount];
    mmdb::PoseView poses;
    if (db.posesCoded()) {
      for (auto& stream : decoded) stream.resize(size_t(db.frameCount()) * db.jointCount());
      const mmdb::Status s =
          db.decodePoses(0, db.frameCount(), {decoded[0], decoded[1], decoded[2], decoded[3]});
      if (!s) {
        EXPECT_TRUE(s.code() == mmdb::ErrorCode::Corrupt ||
                    s.code() == mmdb::ErrorCode::Inconsistent)
            << name << ": " << s.message();
        return;
      }
      poses = {0, db.frameCount(), decoded[0], decoded[1], decoded[2], decoded[3]};
    }
    for (uint32_t c = 0; c < db.clipCount(); ++c) {
      mmdb::SamplePoseJob job;
      job.database = &db;
      job.poses = poses;
      job.clip = c;
      job.time = 0.3f;
      job.rotations = rotations;
      job.translations = translations;
      EXPECT_TRUE(job.Run().ok()) << name;
    }
  }

  // `mmcook inspect` and `inspect --json`: they print a file that opens, and refuse one that
  // does not with the runtime's reason, or one that opens but whose coded poses do not decode
  // (inspect decodes them), naming the poses.
  void inspect(const std::string& path, bool opened, const std::string& name) {
    for (bool json : {false, true}) {
      std::ostringstream out;
      try {
        mmdb::cook::inspectDatabase(path, json, out);
        EXPECT_TRUE(opened) << name << ": inspect printed a file the runtime refuses";
        EXPECT_GT(out.str().size(), 100u) << name;
      } catch (const mmdb::cook::InputError& e) {
        const bool poses =
            std::string(e.what()).find("its poses do not decode") != std::string::npos;
        EXPECT_TRUE(!opened || poses) << name << ": " << e.what();
      }
    }
  }

  // The sample on the file: an exit code, never a signal, a sanitizer report or exit 3.
  void runSample(const std::string& path, bool opened, const std::string& name) {
#ifdef MMDB_SAMPLE_PATH
    const std::string err = (folder_ / "sample.err").string();
    const std::string command = std::string(MMDB_SAMPLE_PATH) + " '" + path +
                                "' --seconds 1 --characters 2 --quiet-decisions --svg '" +
                                (folder_ / "plot.svg").string() + "' > /dev/null 2> '" + err + "'";
    const int status = std::system(command.c_str());
    const std::string stderr_text = readText(err);
    ASSERT_TRUE(WIFEXITED(status)) << name << ": the sample died: " << stderr_text;
    const int code = WEXITSTATUS(status);
    EXPECT_TRUE(code == 0 || code == 1)
        << name << ": the sample exited " << code << ": " << stderr_text;
    if (!opened) {
      EXPECT_EQ(code, 1) << name;
    }
    EXPECT_EQ(stderr_text.find("Sanitizer"), std::string::npos) << name << ": " << stderr_text;
    EXPECT_EQ(stderr_text.find("runtime error"), std::string::npos) << name << ": " << stderr_text;
#else
    (void)path, (void)opened, (void)name;
#endif
  }

  void check(const Mutation& m, bool run_sample) {
    mmdb::test::AlignedBytes bytes(valid_.data(), valid_.size());
    m.apply(bytes.data());
    const fs::path path = folder_ / "mutated.mmdb";
    mmdb::test::writeFile(path.c_str(), bytes.data(), bytes.size());
    auto opened = mmdb::Database::open(path.c_str());
    if (opened.ok()) {
      ++opened_;
      exercise(opened.value(), m.name);
    } else {
      ++refused_;
      EXPECT_GT(std::strlen(opened.error().message()), 10u) << m.name;
      EXPECT_NE(opened.error().code(), mmdb::ErrorCode::IoError) << m.name;
    }
    inspect(path.string(), opened.ok(), m.name);
    if (run_sample || opened.ok()) runSample(path.string(), opened.ok(), m.name);
  }

  fs::path folder_;
  mmdb::test::AlignedBytes valid_;
  int opened_ = 0, refused_ = 0;
};

TEST_F(FileMutation, TheUnmutatedFileWorksEverywhere) {
  check({"unmutated", [](uint8_t*) {}}, true);
  EXPECT_EQ(opened_, 1);
}

TEST_F(FileMutation, EveryFieldAbsent) {
  std::vector<Mutation> mutations;
  addAbsentFields(valid_.data(), mutations);
  ASSERT_GT(mutations.size(), 60u);
  for (size_t i = 0; i < mutations.size(); ++i) check(mutations[i], i % 8 == 0);
  // Optional fields open (database.h lists them); the rest are refused.
  EXPECT_GT(opened_, 5);
  EXPECT_GT(refused_, 20);
}

TEST_F(FileMutation, CountsAndIndicesOutOfRange) {
  std::vector<Mutation> mutations;
  addScalars(*fb::GetDatabase(valid_.data()), mutations);
  ASSERT_GT(mutations.size(), 100u);
  for (size_t i = 0; i < mutations.size(); ++i) check(mutations[i], i % 16 == 0);
  EXPECT_GT(refused_, 50);
}

TEST_F(FileMutation, NaNAndInfInEveryFloatArray) {
  std::vector<Mutation> mutations;
  addNonFiniteArrays(mutations);
  for (size_t i = 0; i < mutations.size(); ++i) check(mutations[i], i % 16 == 0);
  // Every float the runtime reads is checked at open.
  EXPECT_EQ(opened_, 0);
}

// The semantic checks name the field that is wrong.
TEST_F(FileMutation, RefusalsNameTheField) {
  struct Case {
    Mutation mutation;
    const char* message;
  };
  const Case cases[] = {
      {{"frame rate 1e-45",
        [](uint8_t* b) { setField<float>(rootOf(b), fb::Database::VT_FRAME_RATE, 1e-45f); }},
       "frame_rate 1.4013e-45 is outside [1, 1000] Hz"},
      {{"clip 0 source",
        [](uint8_t* b) {
          setField<int32_t>(rootOf(b)->clips()->Get(0), fb::Clip::VT_SOURCE_INDEX, 1);
        }},
       "clip 0 (clip_0): source_index 1 is outside the 1 sources"},
      {{"clip 1 mirror",
        [](uint8_t* b) {
          setField<int32_t>(rootOf(b)->clips()->Get(1), fb::Clip::VT_MIRROR_OF, 3);
        }},
       "clip 1 (clip_1): mirror_of 3 is not -1 or another of the 3 clips"},
      {{"clip tag",
        [](uint8_t* b) {
          setField<uint64_t>(rootOf(b)->clips()->Get(0), fb::Clip::VT_TAG_MASK, 8);
        }},
       "clip 0 (clip_0): tag_mask has bits 0x8 beyond the 3 tag_names"},
      {{"gap",
        [](uint8_t* b) {
          setField<uint32_t>(rootOf(b)->clips()->Get(2), fb::Clip::VT_FRAME_COUNT, 60);
        }},
       "the clips end at global frame 200 of 210"},
      {{"range tag",
        [](uint8_t* b) {
          reinterpret_cast<mmdb::MatchRange*>(
              const_cast<fb::MatchRange*>(rootOf(b)->ranges()->Get(0)))
              ->tag_mask = 16;
        }},
       "range 0: tag_mask has bits 0x10 beyond the 3 tag_names"},
      {{"root motion NaN", [](uint8_t* b) { floats(rootOf(b)->root_motion()).first[21] = kNaN; }},
       "root_motion[1] is not finite"},
      {{"rotation inf", [](uint8_t* b) { floats(rootOf(b)->local_rotations()).first[2] = kInf; }},
       "local_rotations[0] is not finite"},
      {{"trajectory NaN",
        [](uint8_t* b) { floats(rootOf(b)->settings()->trajectory_times()).first[0] = kNaN; }},
       "settings.trajectory_times[0] = nan: times must be finite, positive and increasing"},
      {{"kind",
        [](uint8_t* b) {
          setField<int8_t>(rootOf(b)->feature_blocks()->Get(0), fb::FeatureBlock::VT_KIND, 2);
        }},
       "feature block 0 (left_foot_position): kind 2 with width 3"},
      {{"no settings",
        [](uint8_t* b) { removeField(rootOf(b), (fb::Database::VT_SETTINGS - 4) / 2); }},
       "settings is absent"},
      {{"no clips", [](uint8_t* b) { removeField(rootOf(b), (fb::Database::VT_CLIPS - 4) / 2); }},
       "clips is absent or empty"},
  };
  for (const Case& c : cases) {
    mmdb::test::AlignedBytes bytes(valid_.data(), valid_.size());
    c.mutation.apply(bytes.data());
    const auto opened = mmdb::Database::fromMemory(bytes.data(), bytes.size());
    ASSERT_FALSE(opened.ok()) << c.mutation.name;
    EXPECT_EQ(opened.error().code(), mmdb::ErrorCode::Inconsistent) << c.mutation.name;
    EXPECT_NE(std::string(opened.error().message()).find(c.message), std::string::npos)
        << c.mutation.name << ": " << opened.error().message();
  }
}

}  // namespace

// --- the same readers on a file whose pose streams are coded ----------------------------------

class CodedFileMutation : public FileMutation {
 protected:
  void SetUp() override {
    FileMutation::SetUp();
    mmdb::test::SyntheticSpec spec;
    spec.clips = 3;
    spec.frames_per_clip = 70;
    spec.joints = 4;
    mmdb::cook::CookedDatabase db = mmdb::test::makeSyntheticDatabase(spec);
    mmdb::cook::CompressionSettings settings;
    settings.segment_frames = 64;  // several segments per track
    mmdb::cook::compressPoses(db, settings, 1);
    valid_ = mmdb::test::serializeAligned(db);
  }
};

const TableRef kCodingTables[] = {
    {"PoseCoding", [](const fb::Database& db) -> const void* { return db.pose_coding(); }},
    {"CodedStream",
     [](const fb::Database& db) -> const void* { return db.pose_coding()->rotations(); }},
};

TEST_F(CodedFileMutation, TheUnmutatedFileWorksEverywhere) {
  ASSERT_NE(fb::GetDatabase(valid_.data())->pose_coding(), nullptr);
  check({"unmutated", [](uint8_t*) {}}, true);
  EXPECT_EQ(opened_, 1);
}

TEST_F(CodedFileMutation, EveryFieldOfTheCodingAbsent) {
  std::vector<Mutation> mutations;
  for (const TableRef& table : kCodingTables) {
    const voffset_t fields = fieldCount(table.locate(*fb::GetDatabase(valid_.data())));
    for (voffset_t f = 0; f < fields; ++f)
      mutations.push_back(
          {std::string(table.name) + " field " + std::to_string(f) + " absent",
           [&table, f](uint8_t* bytes) { removeField(table.locate(*rootOf(bytes)), f); }});
  }
  for (voffset_t f : {voffset_t(29), voffset_t(30)})  // required_features, pose_coding
    mutations.push_back({"Database field " + std::to_string(f) + " absent",
                         [f](uint8_t* bytes) { removeField(rootOf(bytes), f); }});
  for (size_t i = 0; i < mutations.size(); ++i) check(mutations[i], i % 4 == 0);
  EXPECT_GT(refused_, 5);
}

// Bytes of the coded tracks, offsets and data, each changed in turn: every reader returns.
TEST_F(CodedFileMutation, CodedBytesChanged) {
  std::vector<Mutation> mutations;
  const fb::Database* root = fb::GetDatabase(valid_.data());
  const fb::PoseCoding* coding = root->pose_coding();
  const uint8_t* base = valid_.data();
  for (const fb::CodedStream* stream : {coding->rotations(), coding->translations(),
                                        coding->velocities(), coding->angular_velocities()}) {
    const std::pair<const uint8_t*, size_t> regions[] = {
        {reinterpret_cast<const uint8_t*>(stream->tracks()->data()),
         stream->tracks()->size() * sizeof(fb::PoseTrack)},
        {reinterpret_cast<const uint8_t*>(stream->segment_offsets()->data()),
         stream->segment_offsets()->size() * 4},
        {stream->data()->data(), stream->data()->size()}};
    for (const auto& [start, size] : regions) {
      const size_t step = std::max<size_t>(1, size / 24);
      for (size_t i = 0; i < size; i += step) {
        const size_t at = size_t(start - base) + i;
        mutations.push_back({"byte " + std::to_string(at) + " of a coded stream",
                             [at](uint8_t* b) { b[at] ^= 0xa5; }});
      }
    }
  }
  ASSERT_GT(mutations.size(), 100u);
  for (size_t i = 0; i < mutations.size(); ++i) check(mutations[i], i % 16 == 0);
  EXPECT_GT(refused_, 5);
  EXPECT_GT(opened_, 5);
}

// --- arrays of wide structs moved off their boundary -----------------------------------------

namespace {

// A copy of `valid` with one vector copied to the end of the file, its elements starting `shift`
// bytes past a 16-byte boundary, and the field re-pointed at the copy. The FlatBuffers verifier
// accepts this for any shift that keeps the 4-byte length prefix aligned.
mmdb::test::AlignedBytes moveVector(const mmdb::test::AlignedBytes& valid, const TableRef& table,
                                    voffset_t field, size_t element_size, size_t shift) {
  const uint8_t* base = valid.data();
  const auto* t = static_cast<const uint8_t*>(table.locate(*fb::GetDatabase(base)));
  const voffset_t in_table = asTable(t)->GetOptionalFieldOffset(field);
  EXPECT_NE(in_table, 0) << table.name << " field " << field;
  const size_t field_at = size_t(t - base) + in_table;
  const size_t vector_at =
      field_at + flatbuffers::ReadScalar<flatbuffers::uoffset_t>(base + field_at);
  const size_t bytes =
      4 + size_t(flatbuffers::ReadScalar<uint32_t>(base + vector_at)) * element_size;
  const size_t data_at = (valid.size() + 15) / 16 * 16 + 16 + shift;
  std::vector<uint8_t> moved(data_at - 4 + bytes, 0);
  std::memcpy(moved.data(), base, valid.size());
  std::memcpy(moved.data() + data_at - 4, base + vector_at, bytes);
  flatbuffers::WriteScalar<flatbuffers::uoffset_t>(moved.data() + field_at,
                                                   flatbuffers::uoffset_t(data_at - 4 - field_at));
  return mmdb::test::AlignedBytes(moved);
}

struct MovedArray {
  const char* name;
  TableRef table;
  voffset_t field;
  size_t element_size;
};

void expectMisalignedRefused(const mmdb::test::AlignedBytes& valid,
                             const std::vector<MovedArray>& arrays) {
  for (const MovedArray& a : arrays) {
    // On its boundary the moved copy opens: the move itself is sound.
    const mmdb::test::AlignedBytes aligned = moveVector(valid, a.table, a.field, a.element_size, 0);
    const auto good = mmdb::Database::fromMemory(aligned.data(), aligned.size());
    EXPECT_TRUE(good.ok()) << a.name << ": " << (good.ok() ? "" : good.error().message());
    // Four bytes off, it is refused by name before anything reads it.
    const mmdb::test::AlignedBytes off = moveVector(valid, a.table, a.field, a.element_size, 4);
    const auto bad = mmdb::Database::fromMemory(off.data(), off.size());
    ASSERT_FALSE(bad.ok()) << a.name;
    EXPECT_EQ(bad.error().code(), mmdb::ErrorCode::Misaligned) << a.name;
    EXPECT_NE(std::string(bad.error().message()).find(a.name), std::string::npos)
        << bad.error().message();
  }
}

const TableRef& kRoot = kTables[0];
const TableRef& kSkeleton = kTables[2];

TEST_F(FileMutation, EveryArrayOfWideStructsIsCheckedAtOpen) {
  expectMisalignedRefused(
      valid_,
      {{"ranges", kRoot, fb::Database::VT_RANGES, sizeof(fb::MatchRange)},
       {"local_rotations", kRoot, fb::Database::VT_LOCAL_ROTATIONS, sizeof(fb::Vec4)},
       {"root_motion", kRoot, fb::Database::VT_ROOT_MOTION, sizeof(fb::RootFrame)},
       {"features", kRoot, fb::Database::VT_FEATURES, sizeof(float)},
       {"bounds_large_max", kRoot, fb::Database::VT_BOUNDS_LARGE_MAX, sizeof(float)},
       {"skeleton.bind_translations", kSkeleton, fb::Skeleton::VT_BIND_TRANSLATIONS,
        sizeof(fb::Vec4)},
       {"skeleton.bind_rotations", kSkeleton, fb::Skeleton::VT_BIND_ROTATIONS, sizeof(fb::Vec4)}});
}

TEST_F(CodedFileMutation, CodedTracksAreCheckedAtOpen) {
  const TableRef& rotations = kCodingTables[1];  // the rotations' CodedStream
  const TableRef velocities = {"velocities", [](const fb::Database& d) -> const void* {
                                 return d.pose_coding()->velocities();
                               }};
  expectMisalignedRefused(valid_, {{"pose_coding.rotations.tracks", rotations,
                                    fb::CodedStream::VT_TRACKS, sizeof(fb::PoseTrack)},
                                   {"pose_coding.velocities.tracks", velocities,
                                    fb::CodedStream::VT_TRACKS, sizeof(fb::PoseTrack)}});
}

}  // namespace
