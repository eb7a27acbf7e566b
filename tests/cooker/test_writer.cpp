// The .mmdb writer: every schema field survives a round trip, GPU arrays are 16-byte aligned,
// the bytes are deterministic, and the atomic write never leaves a partial or stray file.
#include "cli/build_outputs.h"
#include "core/errors.h"
#include "write/database_writer.h"
#include "write/pose_stream_writer.h"
#include "write/sequential_file.h"

#include <mmdb/mmdb_generated.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

namespace {

namespace fb = mmdb::fb;
namespace fs = std::filesystem;

// Two frames of a three-joint skeleton, every value distinct so a swapped field shows.
mmdb::cook::CookedDatabase makeDatabase() {
  mmdb::cook::CookedDatabase db;
  db.settings.frame_rate = 30.0f;
  db.settings.unit_scale = 0.01f;
  db.settings.root_position_window = 15;
  db.settings.facing_window = 31;
  db.settings.savitzky_golay_order = 2;
  db.settings.contact_speed_threshold = 0.2f;
  db.settings.contact_median_frames = 3;
  db.settings.trailing_unmatchable_frames = 10;
  db.settings.trajectory_times = {0.25f, 0.5f, 0.75f};
  db.settings.block_weights = {0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.1f, 1.2f};

  db.sources = {{"walk.bvh", 0x0123456789abcdefull, 4321, mmdb::cook::SourceFormat::Bvh},
                {"run.fbx", 0xfedcba9876543210ull, 98765, mmdb::cook::SourceFormat::Fbx}};

  auto& sk = db.skeleton;
  sk.names = {"Hips", "LeftFoot", "RightFoot"};
  sk.parents = {-1, 0, 0};
  sk.bind_translations = {{0, 1, 0}, {0.1f, -0.4f, 0}, {-0.1f, -0.4f, 0}};
  sk.bind_rotations = {glm::quat(1, 0, 0, 0), glm::quat(0.5f, 0.5f, 0.5f, 0.5f),
                       glm::quat(0.8f, 0, 0.6f, 0)};
  sk.roles = {{mmdb::cook::Role::Hips, 0},
              {mmdb::cook::Role::LeftFoot, 1},
              {mmdb::cook::Role::RightFoot, 2},
              {mmdb::cook::Role::Facing, 0}};
  sk.facing_axis = {0, 1, 0};
  sk.preset = "bandai";
  sk.contact_joints = {1, 2};

  mmdb::cook::CookedClip walk;
  walk.name = "walk";
  walk.source_index = 0;
  walk.first_frame = 0;
  walk.frame_count = 1;
  walk.source_frame_rate = 120.0f;
  walk.source_first_frame = 7;
  walk.source_frame_count = 4;
  walk.tag_mask = 0x5;
  mmdb::cook::CookedClip mirrored = walk;
  mirrored.name = "walk_mirror";
  mirrored.source_index = 1;
  mirrored.first_frame = 1;
  mirrored.mirrored = true;
  mirrored.mirror_of = 0;
  mirrored.tag_mask = 0x2;
  mirrored.take = "Take 001";
  db.clips = {walk, mirrored};
  db.tag_names = {"locomotion", "turn", "idle"};
  db.ranges = {{0, 1, 0x1}, {1, 1, 0x8000000000000002ull}};

  db.frame_rate = 30.0f;
  db.frame_count = 2;
  db.joint_count = 3;
  for (int i = 0; i < 6; ++i) {
    const float f = static_cast<float>(i);
    db.local_rotations.push_back(glm::quat(1 + f, 2 + f, 3 + f, 4 + f));  // w, x, y, z
    db.local_translations.push_back({10 + f, 11 + f, 12 + f});
    db.local_velocities.push_back({20 + f, 21 + f, 22 + f});
    db.local_angular_velocities.push_back({30 + f, 31 + f, 32 + f});
  }
  for (int i = 0; i < 2; ++i) {
    const float f = static_cast<float>(i);
    mmdb::cook::CookedRootFrame r;
    r.position = {40 + f, 0, 41 + f};
    r.rotation = glm::quat(0.6f, 0, 0.8f, 0);
    r.velocity = {42 + f, 43 + f, 44 + f};
    r.angular_velocity = {45 + f, 46 + f, 47 + f};
    db.root_motion.push_back(r);
  }
  db.contacts = {0x1, 0x3};

  db.feature_count = 3;
  db.feature_stride = 4;
  db.features = {1.5f, 2.5f, 3.5f, 0.0f, -1.5f, -2.5f, -3.5f, 0.0f};
  db.feature_offset = {0.1f, 0.2f, 0.3f};
  db.feature_scale = {1.1f, 1.2f, 1.3f};
  db.feature_blocks = {
      {"left_foot_position", mmdb::cook::FeatureKind::Position, 1, 0, 2, 0.25f, 0.75f},
      {"trajectory_direction", mmdb::cook::FeatureKind::TrajectoryDirection, -1, 2, 1, 0.5f, 1.5f}};
  db.bounds_small_size = 1;
  db.bounds_large_size = 2;
  db.bounds_small_min = {-1.5f, -2.5f, -3.5f, 0, 1.5f, 2.5f, 3.5f, 0};
  db.bounds_small_max = {-1.25f, -2.25f, -3.25f, 0, 1.25f, 2.25f, 3.25f, 0};
  db.bounds_large_min = {-9, -8, -7, 0};
  db.bounds_large_max = {9, 8, 7, 0};
  return db;
}

const fb::Database* verifiedRoot(const std::vector<uint8_t>& bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  EXPECT_TRUE(fb::VerifyDatabaseBuffer(verifier));
  EXPECT_TRUE(fb::DatabaseBufferHasIdentifier(bytes.data()));
  return fb::GetDatabase(bytes.data());
}

void expectVec4(const fb::Vec4* v, float x, float y, float z, float w) {
  ASSERT_NE(v, nullptr);
  EXPECT_FLOAT_EQ(v->x(), x);
  EXPECT_FLOAT_EQ(v->y(), y);
  EXPECT_FLOAT_EQ(v->z(), z);
  EXPECT_FLOAT_EQ(v->w(), w);
}

template <typename T>
std::vector<T> toStd(const flatbuffers::Vector<T>* v) {
  EXPECT_NE(v, nullptr);
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>{};
}

std::vector<std::string> toStrings(
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  for (const auto* s : *v) out.push_back(s->str());
  return out;
}

TEST(Writer, HeaderAndSettingsRoundTrip) {
  const mmdb::cook::CookedDatabase db = makeDatabase();
  const auto bytes = mmdb::cook::serializeDatabase(db);
  const fb::Database* root = verifiedRoot(bytes);
  ASSERT_NE(root, nullptr);
  ASSERT_NE(root->version(), nullptr);
  EXPECT_EQ(root->version()->major(), mmdb::cook::kSchemaMajor);
  EXPECT_EQ(root->version()->minor(), mmdb::cook::kSchemaMinor);
  EXPECT_EQ(root->cooker_version()->str(), mmdb::cook::kCookerVersion);
  EXPECT_FLOAT_EQ(root->frame_rate(), 30.0f);
  EXPECT_EQ(root->frame_count(), 2u);
  EXPECT_EQ(root->joint_count(), 3u);

  const fb::CookSettings* s = root->settings();
  ASSERT_NE(s, nullptr);
  EXPECT_FLOAT_EQ(s->frame_rate(), 30.0f);
  EXPECT_FLOAT_EQ(s->unit_scale(), 0.01f);
  EXPECT_EQ(s->root_position_window(), 15);
  EXPECT_EQ(s->facing_window(), 31);
  EXPECT_EQ(s->savitzky_golay_order(), 2);
  EXPECT_FLOAT_EQ(s->contact_speed_threshold(), 0.2f);
  EXPECT_EQ(s->contact_median_frames(), 3);
  EXPECT_EQ(s->trailing_unmatchable_frames(), 10);
  EXPECT_EQ(toStd(s->trajectory_times()), db.settings.trajectory_times);
  EXPECT_EQ(toStd(s->block_weights()), db.settings.block_weights);
}

TEST(Writer, SourcesSkeletonClipsTagsRangesRoundTrip) {
  const mmdb::cook::CookedDatabase db = makeDatabase();
  const auto bytes = mmdb::cook::serializeDatabase(db);
  const fb::Database* root = verifiedRoot(bytes);

  ASSERT_EQ(root->sources()->size(), 2u);
  const fb::Source* run = root->sources()->Get(1);
  EXPECT_EQ(root->sources()->Get(0)->path()->str(), "walk.bvh");
  EXPECT_EQ(root->sources()->Get(0)->format(), fb::SourceFormat::Bvh);
  EXPECT_EQ(run->path()->str(), "run.fbx");
  EXPECT_EQ(run->content_hash(), 0xfedcba9876543210ull);
  EXPECT_EQ(run->size_bytes(), 98765u);
  EXPECT_EQ(run->format(), fb::SourceFormat::Fbx);

  const fb::Skeleton* sk = root->skeleton();
  ASSERT_NE(sk, nullptr);
  EXPECT_EQ(toStrings(sk->names()), db.skeleton.names);
  EXPECT_EQ(toStd(sk->parents()), db.skeleton.parents);
  ASSERT_EQ(sk->bind_translations()->size(), 3u);
  expectVec4(sk->bind_translations()->Get(2), -0.1f, -0.4f, 0, 0);
  ASSERT_EQ(sk->bind_rotations()->size(), 3u);
  expectVec4(sk->bind_rotations()->Get(1), 0.5f, 0.5f, 0.5f, 0.5f);
  expectVec4(sk->bind_rotations()->Get(2), 0, 0.6f, 0, 0.8f);  // x, y, z, w
  ASSERT_EQ(sk->roles()->size(), 4u);
  EXPECT_EQ(sk->roles()->Get(2)->role(), fb::Role::RightFoot);
  EXPECT_EQ(sk->roles()->Get(2)->joint(), 2);
  EXPECT_EQ(sk->roles()->Get(3)->role(), fb::Role::Facing);
  EXPECT_EQ(sk->roles()->Get(3)->joint(), 0);
  expectVec4(sk->facing_axis(), 0, 1, 0, 0);
  EXPECT_EQ(sk->preset()->str(), "bandai");
  EXPECT_EQ(toStd(sk->contact_joints()), db.skeleton.contact_joints);

  ASSERT_EQ(root->clips()->size(), 2u);
  const fb::Clip* walk = root->clips()->Get(0);
  const fb::Clip* mirror = root->clips()->Get(1);
  EXPECT_EQ(walk->name()->str(), "walk");
  EXPECT_EQ(walk->source_index(), 0);
  EXPECT_EQ(walk->first_frame(), 0u);
  EXPECT_EQ(walk->frame_count(), 1u);
  EXPECT_FLOAT_EQ(walk->source_frame_rate(), 120.0f);
  EXPECT_EQ(walk->source_first_frame(), 7u);
  EXPECT_EQ(walk->source_frame_count(), 4u);
  EXPECT_FALSE(walk->mirrored());
  EXPECT_EQ(walk->mirror_of(), -1);
  EXPECT_EQ(walk->tag_mask(), 0x5u);
  EXPECT_EQ(walk->take()->str(), "");
  EXPECT_EQ(mirror->name()->str(), "walk_mirror");
  EXPECT_EQ(mirror->source_index(), 1);
  EXPECT_EQ(mirror->first_frame(), 1u);
  EXPECT_TRUE(mirror->mirrored());
  EXPECT_EQ(mirror->mirror_of(), 0);
  EXPECT_EQ(mirror->tag_mask(), 0x2u);
  EXPECT_EQ(mirror->take()->str(), "Take 001");

  EXPECT_EQ(toStrings(root->tag_names()), db.tag_names);
  ASSERT_EQ(root->ranges()->size(), 2u);
  EXPECT_EQ(root->ranges()->Get(1)->first_frame(), 1u);
  EXPECT_EQ(root->ranges()->Get(1)->frame_count(), 1u);
  EXPECT_EQ(root->ranges()->Get(1)->tag_mask(), 0x8000000000000002ull);
}

TEST(Writer, StreamsFeaturesAndBoundsRoundTrip) {
  const mmdb::cook::CookedDatabase db = makeDatabase();
  const auto bytes = mmdb::cook::serializeDatabase(db);
  const fb::Database* root = verifiedRoot(bytes);

  ASSERT_EQ(root->local_rotations()->size(), 6u);
  ASSERT_EQ(root->local_translations()->size(), 6u);
  ASSERT_EQ(root->local_velocities()->size(), 6u);
  ASSERT_EQ(root->local_angular_velocities()->size(), 6u);
  for (unsigned i = 0; i < 6; ++i) {
    const float f = static_cast<float>(i);
    expectVec4(root->local_rotations()->Get(i), 2 + f, 3 + f, 4 + f, 1 + f);
    expectVec4(root->local_translations()->Get(i), 10 + f, 11 + f, 12 + f, 0);
    expectVec4(root->local_velocities()->Get(i), 20 + f, 21 + f, 22 + f, 0);
    expectVec4(root->local_angular_velocities()->Get(i), 30 + f, 31 + f, 32 + f, 0);
  }
  ASSERT_EQ(root->root_motion()->size(), 2u);
  const fb::RootFrame* r = root->root_motion()->Get(1);
  expectVec4(&r->position(), 41, 0, 42, 0);
  expectVec4(&r->rotation(), 0, 0.8f, 0, 0.6f);
  expectVec4(&r->velocity(), 43, 44, 45, 0);
  expectVec4(&r->angular_velocity(), 46, 47, 48, 0);
  EXPECT_EQ(toStd(root->contacts()), db.contacts);

  EXPECT_EQ(root->feature_count(), 3);
  EXPECT_EQ(root->feature_stride(), 4);
  EXPECT_EQ(toStd(root->features()), db.features);
  EXPECT_EQ(toStd(root->feature_offset()), db.feature_offset);
  EXPECT_EQ(toStd(root->feature_scale()), db.feature_scale);
  ASSERT_EQ(root->feature_blocks()->size(), 2u);
  const fb::FeatureBlock* b0 = root->feature_blocks()->Get(0);
  const fb::FeatureBlock* b1 = root->feature_blocks()->Get(1);
  EXPECT_EQ(b0->name()->str(), "left_foot_position");
  EXPECT_EQ(b0->kind(), fb::FeatureKind::Position);
  EXPECT_EQ(b0->joint(), 1);
  EXPECT_EQ(b0->first_column(), 0);
  EXPECT_EQ(b0->width(), 2);
  EXPECT_FLOAT_EQ(b0->std(), 0.25f);
  EXPECT_FLOAT_EQ(b0->weight(), 0.75f);
  EXPECT_EQ(b1->name()->str(), "trajectory_direction");
  EXPECT_EQ(b1->kind(), fb::FeatureKind::TrajectoryDirection);
  EXPECT_EQ(b1->joint(), -1);
  EXPECT_EQ(b1->first_column(), 2);
  EXPECT_EQ(b1->width(), 1);
  EXPECT_FLOAT_EQ(b1->std(), 0.5f);
  EXPECT_FLOAT_EQ(b1->weight(), 1.5f);

  EXPECT_EQ(root->bounds_small_size(), 1);
  EXPECT_EQ(root->bounds_large_size(), 2);
  EXPECT_EQ(toStd(root->bounds_small_min()), db.bounds_small_min);
  EXPECT_EQ(toStd(root->bounds_small_max()), db.bounds_small_max);
  EXPECT_EQ(toStd(root->bounds_large_min()), db.bounds_large_min);
  EXPECT_EQ(toStd(root->bounds_large_max()), db.bounds_large_max);
}

// Fields equal to their schema default (0, false, -1) are still stored: a reader never has to
// guess whether a value was written.
TEST(Writer, DefaultValuedFieldsArePresent) {
  mmdb::cook::CookedDatabase db = makeDatabase();
  db.clips[0].mirror_of = -1;
  db.clips[0].source_index = 0;
  const auto bytes = mmdb::cook::serializeDatabase(db);
  const auto* clip =
      reinterpret_cast<const flatbuffers::Table*>(verifiedRoot(bytes)->clips()->Get(0));
  EXPECT_TRUE(clip->CheckField(fb::Clip::VT_MIRROR_OF));
  EXPECT_TRUE(clip->CheckField(fb::Clip::VT_SOURCE_INDEX));
  EXPECT_TRUE(clip->CheckField(fb::Clip::VT_MIRRORED));
  const auto* root = reinterpret_cast<const flatbuffers::Table*>(verifiedRoot(bytes));
  EXPECT_TRUE(root->CheckField(fb::Database::VT_CONTACTS));
}

template <typename Vector>
size_t offsetOf(const std::vector<uint8_t>& bytes, const Vector* v) {
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(v->Data()) - bytes.data());
}

TEST(Writer, GpuArraysAre16ByteAligned) {
  // Odd sizes everywhere, so alignment cannot come out right by accident.
  for (int extra = 0; extra < 4; ++extra) {
    mmdb::cook::CookedDatabase db = makeDatabase();
    for (int i = 0; i < extra; ++i) {
      db.tag_names.push_back(std::string(static_cast<size_t>(i * 3 + 1), 'x'));
      db.contacts.push_back(static_cast<uint32_t>(i));
      db.feature_offset.push_back(0.5f);
    }
    const auto bytes = mmdb::cook::serializeDatabase(db);
    const fb::Database* root = verifiedRoot(bytes);
    EXPECT_EQ(offsetOf(bytes, root->features()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->bounds_small_min()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->bounds_small_max()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->bounds_large_min()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->bounds_large_max()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->local_rotations()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->local_translations()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->local_velocities()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->local_angular_velocities()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->root_motion()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->skeleton()->bind_rotations()) % 16, 0u);
    EXPECT_EQ(offsetOf(bytes, root->skeleton()->bind_translations()) % 16, 0u);
    EXPECT_EQ(bytes.size() % 16, 0u);
  }
}

// An empty vector is aligned as a full one is: a database with no matchable range (which the
// cook refuses, but the writer must not make unreadable) has its empty `ranges` on 8 bytes, and
// empty GPU arrays on 16, whatever lies before them.
TEST(Writer, EmptyArraysAreAlignedAsFullOnes) {
  for (int extra = 0; extra < 8; ++extra) {
    mmdb::cook::CookedDatabase db = makeDatabase();
    db.ranges.clear();
    db.bounds_small_min.clear(), db.bounds_small_max.clear();
    db.bounds_large_min.clear(), db.bounds_large_max.clear();
    for (int i = 0; i < extra; ++i) {
      db.contacts.push_back(static_cast<uint32_t>(i));
      db.feature_offset.push_back(0.5f);
    }
    const auto bytes = mmdb::cook::serializeDatabase(db);
    const fb::Database* root = verifiedRoot(bytes);
    ASSERT_EQ(root->ranges()->size(), 0u);
    EXPECT_EQ(offsetOf(bytes, root->ranges()) % alignof(fb::MatchRange), 0u) << extra;
    EXPECT_EQ(offsetOf(bytes, root->bounds_small_min()) % 16, 0u) << extra;
    EXPECT_EQ(offsetOf(bytes, root->bounds_large_max()) % 16, 0u) << extra;
  }
}

TEST(Writer, SameInputGivesIdenticalBytes) {
  const auto a = mmdb::cook::serializeDatabase(makeDatabase());
  const auto b = mmdb::cook::serializeDatabase(makeDatabase());
  EXPECT_EQ(a, b);
  mmdb::cook::CookedDatabase changed = makeDatabase();
  changed.features[1] = 2.75f;
  EXPECT_NE(a, mmdb::cook::serializeDatabase(changed));
}

TEST(Writer, EmptyDatabaseStillVerifies) {
  const auto bytes = mmdb::cook::serializeDatabase(mmdb::cook::CookedDatabase{});
  const fb::Database* root = verifiedRoot(bytes);
  EXPECT_EQ(root->frame_count(), 0u);
  ASSERT_NE(root->features(), nullptr);
  EXPECT_EQ(root->features()->size(), 0u);
}

// makeDatabase() with `frames` frames of its three joints, every value distinct: 1,000 frames
// make pose streams of 48 KB, 30,000 of 1.4 MB (more than one piece of a file write).
mmdb::cook::CookedDatabase databaseOfFrames(uint32_t frames) {
  mmdb::cook::CookedDatabase db = makeDatabase();
  db.frame_count = frames;
  db.clips[0].frame_count = frames / 2;
  db.clips[1].first_frame = frames / 2;
  db.clips[1].frame_count = frames - frames / 2;
  db.ranges = {{0, frames / 2, 0x1}, {frames / 2, frames - frames / 2, 0x2}};
  db.local_rotations.clear(), db.local_translations.clear();
  db.local_velocities.clear(), db.local_angular_velocities.clear();
  db.root_motion.resize(frames, db.root_motion[0]);
  db.contacts.assign(frames, 0x1);
  db.features.clear();
  for (uint32_t i = 0; i < frames * db.joint_count; ++i) {
    const float f = float(i) * 1e-3f;
    db.local_rotations.push_back(glm::quat(1 + f, 2 + f, 3 + f, 4 + f));
    db.local_translations.push_back({10 + f, 11 + f, 12 + f});
    db.local_velocities.push_back({20 + f, 21 + f, 22 + f});
    db.local_angular_velocities.push_back({30 + f, 31 + f, 32 + f});
  }
  for (uint32_t i = 0; i < frames * db.feature_stride; ++i) db.features.push_back(float(i) * 0.5f);
  return db;
}

std::vector<uint8_t> piecesOf(const mmdb::cook::SerializedDatabase& bytes, size_t* count) {
  std::vector<uint8_t> all;
  *count = 0;
  bytes.pieces([&](std::span<const uint8_t> piece) {
    all.insert(all.end(), piece.begin(), piece.end());
    ++*count;
    return true;
  });
  return all;
}

// What mmcook writes leaves the raw pose streams, the features and the coded pose bytes out of the
// builder's buffer and makes them piece by piece: the pieces, the whole and the file written are
// serializeDatabase's bytes, for small and large streams, coded poses and an empty database.
TEST(Writer, AFileWriteMakesTheSameBytesFromTheDatabase) {
  mmdb::cook::CookedDatabase coded = databaseOfFrames(1000);
  coded.pose_coding.streams[mmdb::cook::kStreamRotations] = mmdb::cook::CookedCodedStream{};
  coded.pose_coding.streams[mmdb::cook::kStreamRotations]->tracks.resize(3);
  coded.pose_coding.streams[mmdb::cook::kStreamRotations]->segment_offsets = {0, 0, 0, 0};
  // Coded bytes as the write leaves them to the file too: odd sizes (the vectors after them are
  // aligned again), one over the 1 MiB of a piece.
  mmdb::cook::CookedDatabase coded_bytes = databaseOfFrames(1000);
  for (const auto& [stream, size] :
       {std::pair{mmdb::cook::kStreamRotations, size_t{1} << 21},
        std::pair{mmdb::cook::kStreamVelocities, size_t{7}},
        std::pair{mmdb::cook::kStreamAngularVelocities, size_t{4099}}}) {
    mmdb::cook::CookedCodedStream s;
    s.tracks.resize(3);
    s.segment_offsets = {0, uint32_t(size / 3), uint32_t(size / 2), uint32_t(size)};
    for (size_t i = 0; i < size; ++i)  // no period: a piece made from the wrong place differs
      s.data.push_back(uint8_t(i ^ (i >> 8) ^ (i >> 16) ^ size_t(stream)));
    coded_bytes.pose_coding.streams[size_t(stream)] = std::move(s);
  }
  const fs::path out = fs::temp_directory_path() / ("mmdb_pieces_" + std::to_string(::getpid()));
  struct Case {
    const char* name;
    mmdb::cook::CookedDatabase db;
    size_t min_pieces;  // arrays of 1.4 MB take two pieces each
  };
  const Case cases[] = {{"2 frames", makeDatabase(), 1},
                        {"30,000 frames", databaseOfFrames(30000), 9},
                        // Over twice the 8 MiB that the write hands to the disk at a time.
                        {"100,000 frames", databaseOfFrames(100000), 25},
                        {"a coded stream", coded, 1},
                        {"coded streams with bytes", coded_bytes, 3},
                        {"empty", mmdb::cook::CookedDatabase{}, 1}};
  for (const Case& c : cases) {
    const std::vector<uint8_t> expected = mmdb::cook::serializeDatabase(c.db);
    mmdb::cook::SerializedDatabase bytes = mmdb::cook::serializeForWriting(c.db);
    EXPECT_EQ(bytes.size(), expected.size()) << c.name;
    size_t count = 0;
    EXPECT_TRUE(piecesOf(bytes, &count) == expected) << c.name;
    EXPECT_GE(count, c.min_pieces) << c.name;
    // A callback that returns false stops the pieces there.
    size_t calls = 0;
    EXPECT_EQ(bytes.pieces([&](std::span<const uint8_t>) { return ++calls < 2; }), count < 2)
        << c.name;
    EXPECT_EQ(calls, std::min<size_t>(count, 2)) << c.name;
    mmdb::cook::writeFileAtomically(out.string(), bytes);
    std::ifstream in(out, std::ios::binary);
    const std::vector<uint8_t> written{std::istreambuf_iterator<char>(in),
                                       std::istreambuf_iterator<char>()};
    EXPECT_TRUE(written == expected) << c.name;
    const std::span<const uint8_t> whole = bytes.whole();
    EXPECT_TRUE(std::equal(whole.begin(), whole.end(), expected.begin(), expected.end())) << c.name;
    EXPECT_TRUE(piecesOf(bytes, &count) == expected) << c.name << ", after whole()";
  }

  // The comparison that leaves an unchanged output alone reads the made pieces too: a file that
  // differs in one byte of a pose stream or of the features does not hold these bytes.
  const mmdb::cook::CookedDatabase db = databaseOfFrames(30000);
  const mmdb::cook::SerializedDatabase bytes = mmdb::cook::serializeForWriting(db);
  const std::vector<uint8_t> expected = mmdb::cook::serializeDatabase(db);
  const fb::Database* root = fb::GetDatabase(expected.data());
  for (const uint8_t* inside :
       {reinterpret_cast<const uint8_t*>(root->local_translations()->Data()) + 100000,
        reinterpret_cast<const uint8_t*>(root->features()->Data()) + 7}) {
    mmdb::cook::writeFileAtomically(out.string(), bytes);
    EXPECT_TRUE(mmdb::cook::fileHoldsBytes(out.string(), bytes));
    std::vector<uint8_t> changed = expected;
    changed[size_t(inside - expected.data())] ^= 1;
    mmdb::cook::writeFileAtomically(out.string(), changed);
    EXPECT_FALSE(mmdb::cook::fileHoldsBytes(out.string(), bytes));
  }
  fs::remove(out);
}

// A raw cook for the file keeps each clip's pose arrays (raw_pose_parts) instead of concatenated
// streams: the bytes are the concatenated streams', whole, in pieces (whose 1 MiB boundaries fall
// inside parts) and written, with parts of any size, empty ones too.
TEST(Writer, StreamsHeldAsPartsWriteTheBytesOfTheConcatenatedStreams) {
  const mmdb::cook::CookedDatabase whole = databaseOfFrames(100000);
  const std::vector<uint8_t> expected = mmdb::cook::serializeDatabase(whole);
  mmdb::cook::CookedDatabase parted = whole;
  auto split = [](auto& stream, auto& parts) {
    using Part = std::remove_reference_t<decltype(stream)>;
    // A 1 MiB piece holds 65,536 Vec4s: a part begins at a piece's last element, another at a
    // piece's first, one is longer than a piece, and some are empty.
    const size_t sizes[] = {0, 1, 65534, 65537, 0, 100000, 3};
    size_t at = 0;
    for (size_t size : sizes) {
      parts.emplace_back(stream.begin() + std::ptrdiff_t(at),
                         stream.begin() + std::ptrdiff_t(at + size));
      at += size;
    }
    parts.emplace_back(stream.begin() + std::ptrdiff_t(at), stream.end());
    Part().swap(stream);
  };
  split(parted.local_rotations, parted.raw_pose_parts.rotations);
  split(parted.local_translations, parted.raw_pose_parts.translations);
  split(parted.local_velocities, parted.raw_pose_parts.velocities);
  split(parted.local_angular_velocities, parted.raw_pose_parts.angular_velocities);
  parted.raw_pose_parts.first = {0};
  for (const auto& part : parted.raw_pose_parts.rotations)
    parted.raw_pose_parts.first.push_back(parted.raw_pose_parts.first.back() + part.size());
  ASSERT_GT(parted.raw_pose_parts.rotations.back().size(), 0u);
  EXPECT_TRUE(mmdb::cook::serializeDatabase(parted) == expected);
  mmdb::cook::SerializedDatabase bytes = mmdb::cook::serializeForWriting(parted);
  size_t count = 0;
  EXPECT_TRUE(piecesOf(bytes, &count) == expected);
  const fs::path out = fs::temp_directory_path() / ("mmdb_parts_" + std::to_string(::getpid()));
  mmdb::cook::writeFileAtomically(out.string(), bytes);
  EXPECT_TRUE(mmdb::cook::fileHoldsBytes(out.string(), expected));
  fs::remove(out);
  const std::span<const uint8_t> made = bytes.whole();
  EXPECT_TRUE(std::equal(made.begin(), made.end(), expected.begin(), expected.end()));
}

// Where rawPoseLayout says the raw pose streams lie is where the file holds them, the layout a
// write of the clips' poses during the cook relies on: for small and large databases, with and
// without range biases, with the streams held as parts. A coded stream is not there.
TEST(Writer, RawPoseLayoutIsWhereTheFileHoldsTheStreams) {
  mmdb::cook::CookedDatabase biased = databaseOfFrames(30001);
  biased.ranges[1].bias = 0.5f;
  mmdb::cook::CookedDatabase coded = databaseOfFrames(1000);
  coded.pose_coding.streams[mmdb::cook::kStreamTranslations] = mmdb::cook::CookedCodedStream{};
  std::vector<std::pair<std::string, mmdb::cook::CookedDatabase>> cases;
  cases.emplace_back("2 frames", makeDatabase());
  cases.emplace_back("1,000 frames", databaseOfFrames(1000));
  cases.emplace_back("30,001 frames", databaseOfFrames(30001));
  cases.emplace_back("biases", biased);
  cases.emplace_back("a coded stream", coded);
  for (const auto& [name, db] : cases) {
    ASSERT_EQ(db.local_rotations.size(), size_t(db.frame_count) * db.joint_count) << name;
    const std::vector<uint8_t> bytes = mmdb::cook::serializeDatabase(db);
    const fb::Database* root = verifiedRoot(bytes);
    ASSERT_NE(root, nullptr) << name;
    const mmdb::cook::RawPoseLayout layout =
        mmdb::cook::rawPoseLayout(db.frame_count, db.joint_count, mmdb::cook::anyRangeBias(db));
    EXPECT_EQ(mmdb::cook::anyRangeBias(db), root->range_biases() != nullptr) << name;
    const mmdb::cook::SerializedDatabase written = mmdb::cook::serializeForWriting(db);
    const flatbuffers::Vector<const fb::Vec4*>* streams[] = {
        root->local_rotations(), root->local_translations(), root->local_velocities(),
        root->local_angular_velocities()};
    for (int s = 0; s < mmdb::cook::kPoseStreamCount; ++s) {
      size_t offset = 0, count = 0;
      if (db.pose_coding.anyCoded()) {  // not a layout of raw poses: the coded one is left out
        EXPECT_EQ(streams[s] == nullptr, db.pose_coding.streams[size_t(s)].has_value()) << name;
        EXPECT_EQ(written.rawStreamAt(s, &offset, &count), streams[s] != nullptr) << name;
        continue;
      }
      ASSERT_NE(streams[s], nullptr) << name;
      EXPECT_EQ(offsetOf(bytes, streams[s]), layout.offsets[size_t(s)]) << name << ", stream " << s;
      EXPECT_EQ(layout.offsets[size_t(s)] % 16, 0u) << name;
      ASSERT_TRUE(written.rawStreamAt(s, &offset, &count)) << name;
      EXPECT_EQ(offset, layout.offsets[size_t(s)]) << name;
      EXPECT_EQ(count, size_t(db.frame_count) * db.joint_count) << name;
    }
  }
}

// `frames` clips (0 frames is allowed) of databaseOfFrames(sum)'s streams, held as parts.
mmdb::cook::CookedDatabase databaseOfClips(const std::vector<uint32_t>& frames) {
  uint32_t total = 0;
  for (const uint32_t f : frames) total += f;
  mmdb::cook::CookedDatabase db = databaseOfFrames(total);
  const size_t joints = db.joint_count;
  auto split = [&](auto& stream, auto& parts) {
    size_t at = 0;
    for (const uint32_t f : frames) {
      parts.emplace_back(stream.begin() + std::ptrdiff_t(at),
                         stream.begin() + std::ptrdiff_t(at + f * joints));
      at += f * joints;
    }
    std::remove_reference_t<decltype(stream)>().swap(stream);
  };
  split(db.local_rotations, db.raw_pose_parts.rotations);
  split(db.local_translations, db.raw_pose_parts.translations);
  split(db.local_velocities, db.raw_pose_parts.velocities);
  split(db.local_angular_velocities, db.raw_pose_parts.angular_velocities);
  db.raw_pose_parts.first = {0};
  for (const uint32_t f : frames)
    db.raw_pose_parts.first.push_back(db.raw_pose_parts.first.back() + f * joints);
  return db;
}

// The file a PoseStreamWriter and then writeAround make of `db`, whose clips have `frames`: the
// clips come in a shuffled order from two threads, those in `left_out` without their poses, and
// `wrong` (when not -1) with one frame too many. When finish() fails, the whole file is written
// over what was written and cut to its size, as mmcook does (the file then also holds a byte past
// the database's end). With `release`, each clip's arrays are released once the writer has
// copied them, and the file can then be made by no other write.
struct StreamedFile {
  std::string bytes;
  bool finished = false;
  size_t written = 0;  // bytes the writer wrote
};
StreamedFile streamedFile(mmdb::cook::CookedDatabase db, const std::vector<uint32_t>& frames,
                          const std::set<int>& left_out, int wrong, bool release = false) {
  using mmdb::cook::PoseStreamWriter;
  const mmdb::cook::SerializedDatabase bytes = mmdb::cook::serializeForWriting(db);
  std::function<void(int)> copied;
  auto& parts = db.raw_pose_parts;
  if (release)
    copied = [&](int c) {
      std::vector<glm::quat>().swap(parts.rotations[size_t(c)]);
      std::vector<glm::vec3>().swap(parts.translations[size_t(c)]);
      std::vector<glm::vec3>().swap(parts.velocities[size_t(c)]);
      std::vector<glm::vec3>().swap(parts.angular_velocities[size_t(c)]);
    };
  const fs::path path = fs::temp_directory_path() / ("mmdb_streamed_" + std::to_string(::getpid()));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0);
  if (wrong >= 0) {  // what a layout that does not hold may have written past the end
    EXPECT_EQ(::pwrite(fd, "x", 1, off_t(bytes.size() + 12345)), 1);
  }
  StreamedFile out;
  std::vector<mmdb::cook::FileRange> written;
  {
    PoseStreamWriter writer(fd, mmdb::cook::rawPoseLayout(db.frame_count, db.joint_count, false),
                            frames, db.joint_count, copied);
    std::vector<int> order(frames.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::shuffle(order.begin(), order.end(), std::mt19937(7));
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next++) < order.size();) {
        const int c = order[i];
        PoseStreamWriter::ClipPoses poses;
        poses.frames = frames[size_t(c)] + (c == wrong ? 1 : 0);
        poses.rotations = parts.rotations[size_t(c)].data();
        poses.translations = parts.translations[size_t(c)].data();
        poses.velocities = parts.velocities[size_t(c)].data();
        poses.angular_velocities = parts.angular_velocities[size_t(c)].data();
        writer.clipReady(c, left_out.count(c) ? nullptr : &poses);
      }
    };
    std::thread helper(work);
    work();
    helper.join();
    out.finished = writer.finish(written);
  }
  for (const mmdb::cook::FileRange& r : written) out.written += r.end - r.first;
  if (release && out.finished) {  // the released poses cannot be made again
    EXPECT_THROW(bytes.pieces([](std::span<const uint8_t>) { return true; }), std::logic_error);
  }
  if (!out.finished) written.clear();
  EXPECT_TRUE(bytes.writeAround(fd, written));
  if (!out.finished) {
    EXPECT_EQ(::ftruncate(fd, off_t(bytes.size())), 0);
  }
  ::close(fd);
  std::ifstream in(path, std::ios::binary);
  out.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fs::remove(path);
  return out;
}

// Clips' poses written during the cook and the rest after it make serializeDatabase's bytes:
// clips inside one page (0, 1, 50 frames), longer than a 2 MiB block, gaps left by clips that
// come without their poses (as from the clip cache), and after the streams more than the 16 MiB
// that goes around the page cache on its own. The writer writes every byte of the clips it is
// given, so their arrays may be released once copied. A clip that does not fit the layout stops
// the writes; the whole write over them still gives the bytes.
TEST(Writer, PosesWrittenDuringTheCookAndTheRestAfterMakeTheFile) {
  const std::vector<uint32_t> frames = {0, 1, 50, 100000, 85, 86, 3000, 20000, 7, 85000, 2};
  const mmdb::cook::CookedDatabase db = databaseOfClips(frames);
  const std::string expected = [&] {
    const std::vector<uint8_t> b = mmdb::cook::serializeDatabase(db);
    return std::string(b.begin(), b.end());
  }();
  const size_t pose_bytes = size_t(db.frame_count) * db.joint_count * 16 * 4;
  ASSERT_GT(expected.size() - pose_bytes, size_t{16} << 20);

  for (const bool release : {false, true}) {
    const StreamedFile all = streamedFile(db, frames, {}, -1, release);
    EXPECT_TRUE(all.finished) << release;
    EXPECT_EQ(all.written, pose_bytes) << release;
    EXPECT_TRUE(all.bytes == expected) << release;

    const StreamedFile gaps = streamedFile(db, frames, {1, 3, 9}, -1, release);
    EXPECT_TRUE(gaps.finished) << release;
    const size_t left_out = size_t(frames[1] + frames[3] + frames[9]) * db.joint_count * 16 * 4;
    EXPECT_EQ(gaps.written, pose_bytes - left_out) << release;
    EXPECT_TRUE(gaps.bytes == expected) << release;
  }

  const StreamedFile wrong = streamedFile(db, frames, {}, 6);
  EXPECT_FALSE(wrong.finished);
  EXPECT_TRUE(wrong.bytes == expected);
}

// --- atomic write ---

class AtomicWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("mmdb_writer_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(folder_, fs::perms::owner_all, ec);
    fs::remove_all(folder_, ec);
  }
  static std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  size_t entryCount() const {
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(folder_), fs::directory_iterator()));
  }
  fs::path folder_;
};

// Temporary names carry this machine's name, spelled so that it cannot be taken for a path or
// for the name's other parts: letters, digits and '-' only, at most 64 characters.
// Each path as a depfile gives it to the real Ninja: the paths `ninja -t deps` reads back, or
// nothing when ninja is not installed.
std::vector<std::string> ninjaReads(const fs::path& folder, const std::string& depfile) {
  fs::create_directories(folder);
  std::ofstream(folder / "build.ninja") << "rule gen\n  command = cp dep.in out.d && touch out\n"
                                           "  depfile = out.d\n  deps = gcc\nbuild out: gen\n";
  std::ofstream(folder / "dep.in", std::ios::binary) << depfile;
  const std::string in = "cd '" + folder.string() + "' && ";
  if (std::system((in + "ninja --quiet > /dev/null 2>&1").c_str()) != 0) return {};
  if (std::system((in + "ninja -t deps out > deps.txt").c_str()) != 0) return {};
  std::ifstream deps(folder / "deps.txt");
  std::vector<std::string> paths;
  std::string line;
  std::getline(deps, line);  // "out: #deps N, ..."
  while (std::getline(deps, line))
    if (line.rfind("    ", 0) == 0) paths.push_back(line.substr(4));
  return paths;
}

// Paths a depfile can carry are escaped as Ninja 1.11 reads them back (a space or '#' after
// backslashes, '$'); a path no depfile can carry (a quote, ';', '*', a tab, a newline, a
// backslash at its end) is an error naming it and saying to rename the folder.
TEST(Depfile, EscapesWhatNinjaReadsAndRefusesWhatItCannot) {
  const std::vector<std::string> inputs = {"/data/a b/#1/$x/c:d/e%f!g/caf\xc3\xa9.bvh",
                                           "/data/back\\slash/x.bvh", "/data/two\\ space.bvh",
                                           "/data/two\\\\#hash.bvh"};
  const std::string text = mmdb::cook::depfileText("/out/db.mmdb", inputs);
  const std::string expected =
      "/out/db.mmdb: \\\n  /data/a\\ b/\\#1/$$x/c:d/e%f!g/caf\xc3\xa9.bvh \\\n"
      "  /data/back\\slash/x.bvh \\\n  /data/two\\\\\\ space.bvh \\\n"
      "  /data/two\\\\\\#hash.bvh \\\n";
  EXPECT_EQ(text.substr(0, expected.size()), expected);
  const fs::path folder = fs::temp_directory_path() / ("mmdb_depfile_" + std::to_string(getpid()));
  const std::vector<std::string> read = ninjaReads(folder, text);
  fs::remove_all(folder);
  if (!read.empty()) {  // ninja is installed
    ASSERT_GE(read.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ(read[i], inputs[i]);
  }
  const std::pair<std::string, std::string> refused[] = {
      {"/data/it's/a.bvh", "'''"},
      {"/data/say \"hi\"/a.bvh", "'\"'"},
      {"/data/a;b/a.bvh", "';'"},
      {"/data/*/a.bvh", "'*'"},
      {"/data/tab\there/a.bvh", "a tab"},
      {"/data/new\nline/a.bvh", "a newline"},
      {"/data/ends\\", "a backslash at its end"},
      {"/data/c\\:/a.bvh", "a backslash before ':'"}};
  for (const auto& [path, what] : refused) {
    try {
      mmdb::cook::depfileText("/out/db.mmdb", std::vector<std::string>{path});
      ADD_FAILURE() << path;
    } catch (const mmdb::cook::InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--depfile: the path '" + path + "' holds " + what +
                    ", which a depfile cannot carry (Ninja and Make would read other paths); "
                    "rename the folder or file, or cook without --depfile");
    }
  }
}

TEST(TemporaryNames, CarryTheHostNameSpelledSafely) {
  ::setenv("MMCOOK_HOST_NAME", "build farm/7.example.com", 1);
  EXPECT_EQ(mmdb::cook::temporaryHostName(), "build-farm-7-example-com");
  ::setenv("MMCOOK_HOST_NAME", std::string(100, 'h').c_str(), 1);
  EXPECT_EQ(mmdb::cook::temporaryHostName(), std::string(64, 'h'));
  ::setenv("MMCOOK_HOST_NAME", "", 1);  // empty: the machine's own name
  const std::string own = mmdb::cook::temporaryHostName();
  ::unsetenv("MMCOOK_HOST_NAME");
  EXPECT_EQ(own, mmdb::cook::temporaryHostName());
  EXPECT_FALSE(own.empty());
  EXPECT_EQ(
      own.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"),
      std::string::npos)
      << own;
}

TEST_F(AtomicWrite, WritesAndReplaces) {
  const fs::path out = folder_ / "out.mmdb";
  mmdb::cook::writeFileAtomically(out.string(), {'a', 'b', 'c'});
  EXPECT_EQ(readFile(out), "abc");
  mmdb::cook::writeFileAtomically(out.string(), {'x', 'y'});
  EXPECT_EQ(readFile(out), "xy");
  EXPECT_EQ(entryCount(), 1u);  // no temporary file left behind
}

TEST_F(AtomicWrite, MissingFolderIsInputErrorNamingPathAndReason) {
  const std::string out = (folder_ / "no_such_folder" / "out.mmdb").string();
  try {
    mmdb::cook::writeFileAtomically(out, {'a'});
    FAIL() << "expected InputError";
  } catch (const mmdb::cook::InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot write '" + out + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
    EXPECT_NE(message.find("-o"), std::string::npos) << message;
  }
  EXPECT_EQ(entryCount(), 0u);
}

// Runs `write` as a user the folder's permission bits bind. Root ignores them, so as root the
// write runs in a child process that first gives up root for the unprivileged 'nobody' id.
// True when `write` threw InputError.
template <typename Write>
bool throwsInputErrorWithoutRoot(Write write) {
  const auto throwsInputError = [&] {
    try {
      write();
    } catch (const mmdb::cook::InputError&) {
      return true;
    } catch (...) {
    }
    return false;
  };
  if (::geteuid() != 0) return throwsInputError();
  const pid_t child = ::fork();
  if (child == 0) {
    constexpr uid_t kNobody = 65534;
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
    ::_exit(throwsInputError() ? 0 : 1);
  }
  int status = 0;
  return child > 0 && ::waitpid(child, &status, 0) == child && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

TEST_F(AtomicWrite, UnwritableFolderLeavesExistingFileUntouched) {
  const fs::path out = folder_ / "out.mmdb";
  mmdb::cook::writeFileAtomically(out.string(), {'o', 'l', 'd'});
  // Readable and searchable by anyone, writable by no one (root aside).
  fs::permissions(folder_, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::others_read |
                               fs::perms::others_exec | fs::perms::group_read |
                               fs::perms::group_exec);
  EXPECT_TRUE(throwsInputErrorWithoutRoot([&] {
    mmdb::cook::writeFileAtomically(out.string(), {'n', 'e', 'w'});
  }));
  fs::permissions(folder_, fs::perms::owner_all);
  EXPECT_EQ(readFile(out), "old");
  EXPECT_EQ(entryCount(), 1u);
}

TEST_F(AtomicWrite, FolderAsOutputIsInputErrorAndUntouched) {
  const fs::path out = folder_ / "a_folder";
  fs::create_directories(out / "inside");
  try {
    mmdb::cook::writeFileAtomically(out.string(), {'a'});
    FAIL() << "expected InputError";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("it is a folder"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(out / "inside"));
  EXPECT_EQ(entryCount(), 1u);
}

// A write that fails half way (here: the file-size limit, which binds root too) removes the
// temporary file and leaves the existing output as it was. The message of a write of `size`
// bytes over "old" under a limit of `limit` bytes.
std::string failedWriteMessage(const fs::path& out, size_t size, rlim_t limit) {
  mmdb::cook::writeFileAtomically(out.string(), {'o', 'l', 'd'});
  struct rlimit saved {};
  if (::getrlimit(RLIMIT_FSIZE, &saved) != 0) return "getrlimit failed";
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = limit;
  std::string message = "setrlimit failed";
  if (::setrlimit(RLIMIT_FSIZE, &small) == 0) {
    message = "no error";
    try {
      mmdb::cook::writeFileAtomically(out.string(), std::vector<uint8_t>(size, 7));
    } catch (const mmdb::cook::InputError& e) {
      message = e.what();
    }
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  return message;
}

TEST_F(AtomicWrite, FailedWriteLeavesExistingFileAndNoTemporary) {
  const fs::path out = folder_ / "out.mmdb";
  const std::string message = failedWriteMessage(out, 64 * 1024, 1024);
  EXPECT_NE(message.find("cannot write '" + out.string() + "': writing the temporary file failed"),
            std::string::npos)
      << message;
  EXPECT_EQ(readFile(out), "old");
  EXPECT_EQ(entryCount(), 1u);
}

// The same for a file large enough to go to the disk around the page cache, with the limit
// inside its second 8 MiB block: the failure comes from the thread that writes the blocks,
// after the first one is written.
TEST_F(AtomicWrite, FailedLargeWriteLeavesExistingFileAndNoTemporary) {
  const fs::path out = folder_ / "out.mmdb";
  const std::string message = failedWriteMessage(out, 40 << 20, 12 << 20);
  EXPECT_NE(message.find("cannot write '" + out.string() +
                         "': writing the temporary file failed: " + std::strerror(EFBIG)),
            std::string::npos)
      << message;
  EXPECT_EQ(readFile(out), "old");
  EXPECT_EQ(entryCount(), 1u);
}

// A file written piece by piece holds exactly the pieces: through the page cache (a small
// file), and around it in 8 MiB blocks (a large one, where the file system allows O_DIRECT),
// for lengths at and beside the blocks' edges, pieces that straddle them, and a partial last
// block.
TEST_F(AtomicWrite, SequentialFilesHoldTheirPiecesWhateverTheWay) {
  constexpr size_t kBlock = mmdb::cook::SequentialFile::kBlockBytes;
  const size_t lengths[] = {
      100, kBlock - 1, 2 * kBlock, 2 * kBlock + 1, 3 * kBlock - 4096, 4 * kBlock + 4097};
  std::vector<uint8_t> bytes(4 * kBlock + 4097);
  uint32_t state = 12345;
  for (uint8_t& b : bytes) b = uint8_t((state = state * 1664525u + 1013904223u) >> 24);
  int direct_files = 0;
  for (const size_t length : lengths) {
    const fs::path path = folder_ / ("file_" + std::to_string(length));
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    {
      mmdb::cook::SequentialFile file(fd, length);
      if (length < mmdb::cook::SequentialFile::kDirectMinimumBytes) {
        EXPECT_FALSE(file.direct()) << length;
      }
      direct_files += file.direct();
      // Pieces of 1 byte, 4095, 1 MiB + 3 and the rest, in turn, each written whole or made in
      // the file's own memory (as much of it as room() gives, up to a block's end).
      const size_t piece_lengths[] = {1, 4095, (1 << 20) + 3};
      for (size_t at = 0, i = 0; at < length; ++i) {
        size_t n = std::min(piece_lengths[i % 3], length - at);
        if (i % 2 == 0) {
          ASSERT_TRUE(file.write({bytes.data() + at, n})) << length;
        } else {
          const std::span<uint8_t> room = file.room(n);
          ASSERT_GE(room.size(), 1u);
          ASSERT_LE(room.size(), n);
          n = room.size();
          std::memcpy(room.data(), bytes.data() + at, n);
          ASSERT_TRUE(file.commit(n)) << length;
        }
        at += n;
      }
      ASSERT_TRUE(file.finish()) << length;
    }
    ASSERT_EQ(::close(fd), 0);
    const std::string written = readFile(path);
    ASSERT_EQ(written.size(), length);
    EXPECT_TRUE(written == std::string(bytes.begin(), bytes.begin() + std::ptrdiff_t(length)))
        << length;
  }
  // The temporary folder's file system decides whether the large files went around the page
  // cache (ext4 and XFS do; tmpfs on older kernels does not): the bytes are checked either way.
  std::cout << "[          ] " << direct_files << " of 4 large files written with O_DIRECT\n";
}

TEST_F(AtomicWrite, SystemFolderIsInputError) {
  EXPECT_THROW(mmdb::cook::writeFileAtomically("/proc/self/out.mmdb", {'a'}),
               mmdb::cook::InputError);
}

TEST_F(AtomicWrite, CheckWritableLeavesNothingBehind) {
  mmdb::cook::checkWritable((folder_ / "out.mmdb").string());
  EXPECT_EQ(entryCount(), 0u);
  const std::string missing = (folder_ / "missing" / "out.mmdb").string();
  try {
    mmdb::cook::checkWritable(missing);
    FAIL() << "expected InputError";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "cannot write '" + missing +
            "': cannot create a temporary file beside it: No such "
            "file or directory; check that the folder exists, is writable and has free space, "
            "or choose another output path with -o");
  }
  EXPECT_THROW(mmdb::cook::checkWritable(folder_.string()), mmdb::cook::InputError);
  EXPECT_EQ(entryCount(), 0u);
}

// Replacing needs a writable folder, not a writable file: a read-only output is replaced.
TEST_F(AtomicWrite, ReadOnlyExistingFileIsReplaced) {
  const fs::path out = folder_ / "out.mmdb";
  mmdb::cook::writeFileAtomically(out.string(), {'o'});
  fs::permissions(out, fs::perms::owner_read);
  mmdb::cook::writeFileAtomically(out.string(), {'n'});
  EXPECT_EQ(readFile(out), "n");
}

}  // namespace
