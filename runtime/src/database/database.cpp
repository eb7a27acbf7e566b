// Opening a database: map, identify, version, alignment, FlatBuffers verifier, semantic checks
// (database/checks.cpp); its accessors are in database/accessors.cpp.
#include "mmdb/database.h"

#include "mmdb/mmdb_generated.h"

#include "database/checks.h"
#include "database/file_mapping.h"
#include "database/flatbuffer_views.h"
#include "database/half_features.h"

#include <cstdio>
#include <new>
#include <type_traits>
#include <utility>

namespace mmdb {

static_assert(sizeof(Float4) == sizeof(fb::Vec4) && alignof(fb::Vec4) == 16);
// The public header's copies of the schema's numbers and enums (so that it needs no FlatBuffers)
// must be the schema's.
static_assert(kSchemaMajor == static_cast<uint16_t>(fb::SchemaMajor::Current) &&
              kSchemaMinor == static_cast<uint16_t>(fb::SchemaMinor::Current));
static_assert(kFeatureCodedPoses == static_cast<uint64_t>(fb::RequiredFeature::CodedPoses) &&
              kFeatureRangeBounds == static_cast<uint64_t>(fb::RequiredFeature::RangeBounds) &&
              kKnownFeatures == static_cast<uint64_t>(fb::RequiredFeature::ANY));
constexpr bool sameRole(Role a, fb::Role b) { return static_cast<int>(a) == static_cast<int>(b); }
static_assert(sameRole(Role::Hips, fb::Role::Hips) &&
                  sameRole(Role::LeftFoot, fb::Role::LeftFoot) &&
                  sameRole(Role::RightFoot, fb::Role::RightFoot) &&
                  sameRole(Role::LeftToe, fb::Role::LeftToe) &&
                  sameRole(Role::RightToe, fb::Role::RightToe) &&
                  sameRole(Role::RootPosition, fb::Role::RootPosition) &&
                  sameRole(Role::Facing, fb::Role::Facing) && sameRole(Role::Facing, fb::Role::MAX),
              "mmdb::Role must list schema/mmdb.fbs's Role, in its order");
static_assert(std::is_same_v<std::underlying_type_t<Role>, std::underlying_type_t<fb::Role>>);
static_assert(sizeof(RootFrame) == sizeof(fb::RootFrame));
static_assert(sizeof(MatchRange) == sizeof(fb::MatchRange) && offsetof(MatchRange, tag_mask) == 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "The .mmdb views are little-endian; a big-endian port must byte-swap at load"
#endif

const char* errorCodeName(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::None:
      return "None";
    case ErrorCode::IoError:
      return "IoError";
    case ErrorCode::NotAnMmdb:
      return "NotAnMmdb";
    case ErrorCode::VersionMismatch:
      return "VersionMismatch";
    case ErrorCode::Misaligned:
      return "Misaligned";
    case ErrorCode::Corrupt:
      return "Corrupt";
    case ErrorCode::Inconsistent:
      return "Inconsistent";
    case ErrorCode::InvalidArgument:
      return "InvalidArgument";
    case ErrorCode::NoMatch:
      return "NoMatch";
    case ErrorCode::DeviceError:
      return "DeviceError";
  }
  return "Unknown";
}

namespace {

using detail::aligned16;
using detail::checkAlignment;
using detail::checkSemantics;
using detail::checkVersion;
using detail::count;

void log(const OpenOptions& o, LogLevel level, const char* message) {
  if (o.log) o.log(o.log_user, level, message);
}

void logOpened(const OpenOptions& o, const fb::Database& root, const char* path) {
  if (!o.log) return;
  char line[320];
  std::snprintf(line, sizeof(line), "opened %s.mmdb %u.%u: %u frames, %u joints, %u clips",
                path ? path : "", unsigned(root.version()->major()),
                unsigned(root.version()->minor()), root.frame_count(), root.joint_count(),
                unsigned(count(root.clips())));
  log(o, LogLevel::Info, line);
}

}  // namespace

Database::Database(const uint8_t* bytes, size_t size, bool mapped) noexcept
    : bytes_(bytes), size_(size), mapped_(mapped) {}

Database::Database(Database&& other) noexcept
    : bytes_(std::exchange(other.bytes_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, false)),
      root_(std::exchange(other.root_, nullptr)),
      half_storage_(std::move(other.half_storage_)),
      half_features_(std::exchange(other.half_features_, {})),
      half_errors_(std::exchange(other.half_errors_, {})) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    release();
    bytes_ = std::exchange(other.bytes_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, false);
    root_ = std::exchange(other.root_, nullptr);
    half_storage_ = std::move(other.half_storage_);
    half_features_ = std::exchange(other.half_features_, {});
    half_errors_ = std::exchange(other.half_errors_, {});
  }
  return *this;
}

Database::~Database() { release(); }

void Database::release() noexcept {
  if (mapped_ && bytes_) detail::unmapWholeFile(bytes_, size_);
  bytes_ = nullptr;
  size_ = 0;
  mapped_ = false;
  root_ = nullptr;
  half_storage_.reset();
  half_features_ = {};
  half_errors_ = {};
}

void detail::AlignedFree::operator()(void* p) const noexcept {
  ::operator delete(p, std::align_val_t(64));
}

// halfFeatures() and halfFeatureErrors() of the verified file, where this CPU's search reads
// them. Without the memory the database opens without them (its searches read the float rows).
void Database::makeHalfFeatures(const OpenOptions& options) noexcept {
  if (!options.half_features || !detail::halfFeaturesSupported()) return;
  const uint32_t frames = frameCount(), stride = featureStride();
  if (frames == 0) return;
  const size_t values = size_t(frames) * stride;
  const size_t row_bytes = (values * sizeof(uint16_t) + 63) / 64 * 64;
  void* memory = ::operator new(row_bytes + size_t(frames) * sizeof(float), std::align_val_t(64),
                                std::nothrow);
  if (!memory) {
    log(options, LogLevel::Warning,
        "no memory for the half-precision copy of the features: searches read the float rows");
    return;
  }
  half_storage_.reset(static_cast<uint8_t*>(memory));
  uint16_t* rows = static_cast<uint16_t*>(memory);
  float* errors = reinterpret_cast<float*>(static_cast<uint8_t*>(memory) + row_bytes);
  detail::makeHalfFeatures(features().data(), frames, stride, featureCount(), rows, errors);
  half_features_ = {rows, values};
  half_errors_ = {errors, frames};
}

Result<Database> Database::adopt(Database&& db, const OpenOptions& options) {
  const uint8_t* bytes = db.bytes_;
  const size_t size = db.size_;
  auto fail = [&](const Error& e) -> Result<Database> {
    log(options, LogLevel::Error, e.message());
    return e;
  };
  if (!bytes)
    return fail(Error::format(ErrorCode::InvalidArgument,
                              "no bytes given (a null pointer with size %zu)", size));
  if (size < 8 + 4)
    return fail(
        Error::format(ErrorCode::NotAnMmdb, "%zu bytes is too small for an .mmdb file", size));
  if (!fb::DatabaseBufferHasIdentifier(bytes))
    return fail(Error(ErrorCode::NotAnMmdb,
                      "the file identifier is not \"MMDB\": this is not a motion-matching "
                      "database"));
  if (!aligned16(bytes))
    return fail(Error(ErrorCode::Misaligned,
                      "the buffer does not start on a 16-byte boundary: load it into aligned "
                      "memory"));
  if (size > kMaxFileBytes)
    return fail(Error::format(ErrorCode::Corrupt,
                              "%zu bytes exceeds the %zu-byte (2 GiB) limit of an .mmdb file", size,
                              kMaxFileBytes));
  if (Status s = checkVersion(bytes, size); !s) return fail(s);

  flatbuffers::Verifier::Options vo;
  vo.max_depth = options.max_verifier_depth;
  vo.max_tables = options.max_verifier_tables;
  vo.check_alignment = true;
  flatbuffers::Verifier verifier(bytes, size, vo);
  if (!fb::VerifyDatabaseBuffer(verifier))
    return fail(Error(ErrorCode::Corrupt,
                      "the FlatBuffers verifier refused the file (truncated or damaged): "
                      "re-cook or re-copy it"));
  const fb::Database* root = fb::GetDatabase(bytes);
  if (const uint64_t unknown = root->required_features() & ~kKnownFeatures)
    return fail(Error::format(ErrorCode::VersionMismatch,
                              "the file needs features 0x%llx that this runtime does not know "
                              "(schema %u.%u); update the runtime or re-cook it with a matching "
                              "mmcook",
                              (unsigned long long)unknown, unsigned(root->version()->major()),
                              unsigned(root->version()->minor())));
  if (Status s = checkAlignment(*root); !s) return fail(s);
  if (Status s = checkSemantics(*root); !s) return fail(s);
  db.root_ = root;
  db.makeHalfFeatures(options);
  logOpened(options, *root, nullptr);
  return std::move(db);
}

Result<Database> Database::fromMemory(const void* bytes, size_t size, const OpenOptions& options) {
  return adopt(Database(static_cast<const uint8_t*>(bytes), size, false), options);
}

Result<Database> Database::open(const char* path, const OpenOptions& options) {
  auto fail = [&](const Error& e) -> Result<Database> {
    log(options, LogLevel::Error, e.message());
    return e;
  };
  if (!path) return fail(Error(ErrorCode::InvalidArgument, "no path given"));
  auto mapped = detail::mapWholeFile(path, 12);
  if (!mapped.ok()) return fail(mapped.error());
  const detail::FileMapping map = mapped.value();
  // Validate quietly, then log once with the path in the message.
  OpenOptions quiet = options;
  quiet.log = nullptr;
  Result<Database> r = adopt(Database(map.bytes, map.size, true), quiet);
  if (!r.ok()) {
    // adopt's Database was destroyed and unmapped the file; prefix the path to the reason.
    return fail(Error::format(r.error().code(), "%.96s: %.140s", path, r.error().message()));
  }
  if (options.log) {
    char named[112];
    std::snprintf(named, sizeof(named), "%.96s as ", path);
    logOpened(options, *r.value().flatbuffer(), named);
  }
  return r;
}

}  // namespace mmdb
