// mmcook end to end: the real executable on generated motion files, checking exit codes, the
// exact error text a user sees, and that a failed cook never creates or touches an output file.
#include "cache/clip_file.h"
#include "cli/json_writer.h"
#include "core/cooked_database.h"

#include <gtest/gtest.h>
#include <mmdb/database.h>
#include <mmdb/mmdb_generated.h>

#include <regex.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Motion files

struct WalkOptions {
  int frames = 240;      // at 30 Hz
  double turn = 0.6;     // amplitude of the heading change, radians
  double speed = 120.0;  // mean speed, cm/s
  bool still = false;    // no motion at all (every feature block has zero spread)
  std::string left_foot = "LeftFoot";
  std::string extra_joint;  // appended under the hips when not empty
};

// A BVH in centimetres with the Geno/LAFAN1-resolved joint names (Hips, Spine2, LeftFoot,
// LeftToeBase, ...): a character walking a curve at a varying speed, legs swinging.
std::string walkBvh(const WalkOptions& o) {
  std::ostringstream out;
  const auto joint = [&](const std::string& indent, const std::string& name, double x, double y,
                         double z) {
    out << indent << "JOINT " << name << "\n"
        << indent << "{\n"
        << indent << "  OFFSET " << x << " " << y << " " << z << "\n"
        << indent << "  CHANNELS 3 Zrotation Xrotation Yrotation\n";
  };
  const auto end = [&](const std::string& indent, double x, double y, double z) {
    out << indent << "End Site\n"
        << indent << "{\n"
        << indent << "  OFFSET " << x << " " << y << " " << z << "\n"
        << indent << "}\n";
  };
  out << "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n"
      << "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n";
  joint("  ", "Spine", 0, 10, 0);
  joint("    ", "Spine1", 0, 10, 0);
  joint("      ", "Spine2", 0, 10, 0);
  end("        ", 0, 10, 0);
  out << "      }\n    }\n  }\n";
  for (const int side : {1, -1}) {
    const std::string s = side > 0 ? "Left" : "Right";
    joint("  ", s + "UpLeg", 10.0 * side, -5, 0);
    joint("    ", s + "Leg", 0, -42, 0);
    joint("      ", side > 0 ? o.left_foot : "RightFoot", 0, -40, 0);
    joint("        ", s + "ToeBase", 0, -5, 12);
    end("          ", 0, 0, 5);
    out << "        }\n      }\n    }\n  }\n";
  }
  if (!o.extra_joint.empty()) {
    joint("  ", o.extra_joint, 0, 5, 5);
    end("    ", 0, 1, 0);
    out << "  }\n";
  }
  const int channels = 6 + 3 * 11 + (o.extra_joint.empty() ? 0 : 3);
  out << "}\nMOTION\nFrames: " << o.frames << "\nFrame Time: 0.0333333\n";
  double x = 0, z = 0, phase = 0;
  const double dt = 1.0 / 30.0;
  for (int f = 0; f < o.frames; ++f) {
    const double t = f * dt;
    const double heading = o.still ? 0 : o.turn * std::sin(0.4 * t);
    const double speed = o.still ? 0 : o.speed * (1.0 + 0.4 * std::sin(0.9 * t));
    x += speed * dt * std::sin(heading);
    z += speed * dt * std::cos(heading);
    phase += o.still ? 0 : 2 * M_PI * 1.8 * dt * speed / o.speed;
    const double deg = 180.0 / M_PI;
    std::vector<double> v(static_cast<size_t>(channels), 0.0);
    v[0] = x;
    v[1] = 92 + (o.still ? 0 : 2 * std::sin(2 * phase));
    v[2] = z;
    v[5] = heading * deg;              // hips yaw (Y rotation, last of Z X Y)
    const size_t left_up = 6 + 3 * 3;  // after Hips, Spine, Spine1, Spine2
    const size_t right_up = left_up + 3 * 4;
    if (!o.still) {
      v[left_up + 1] = 25 * std::sin(phase);                       // hip swing (X rotation)
      v[left_up + 4] = 30 * std::max(0.0, std::sin(phase + 1.2));  // knee
      v[right_up + 1] = -25 * std::sin(phase);
      v[right_up + 4] = 30 * std::max(0.0, std::sin(phase + 1.2 + M_PI));
      v[left_up + 7] = 10 * std::cos(phase);  // ankle
      v[right_up + 7] = -10 * std::cos(phase);
    }
    for (size_t c = 0; c < v.size(); ++c) out << (c ? " " : "") << v[c];
    out << "\n";
  }
  return out.str();
}

// ---------------------------------------------------------------------------------------------
// Running mmcook

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string quoted(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every test that ran leaves SUITE.NAME.ran beside the kept reports, so the schema check
// (tests/cooker/check_cook_reports.py) tells a whole run of these tests from a part of one.
class MarkTestsThatRan : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& test) override {
    std::error_code ec;
    fs::create_directories(MMDB_COOK_REPORTS, ec);
    std::ofstream(fs::path(MMDB_COOK_REPORTS) /
                  (std::string(test.test_suite_name()) + "." + test.name() + ".ran"));
  }
};
[[maybe_unused]] const bool kMarksTestsThatRan = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new MarkTestsThatRan);
  return true;
}();

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("mmdb_cli_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    // The default clip cache of manifest cooks: the test's own.
    ::setenv("MMCOOK_CACHE_DIR", (folder_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    keepCookReports();
    fs::remove_all(folder_);
  }

  // Copies each cook report in the test's folder (a .json with a "format" and a "command" key),
  // once per version, to MMDB_COOK_REPORTS/SUITE.NAME-N-FILE for the schema check
  // (cook_report.schema). Called after every run, so a report a later run replaces is kept too.
  void keepCookReports() {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string prefix = std::string(test->test_suite_name()) + "." + test->name() + "-";
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(
             folder_, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code type_error;
      if (it->path().extension() != ".json" || !it->is_regular_file(type_error)) continue;
      const std::string text = readFile(it->path());
      if (text.find("\"format\"") == std::string::npos ||
          text.find("\"command\"") == std::string::npos)
        continue;
      std::string& last = kept_reports_[it->path().string()];
      if (last == text) continue;
      last = text;
      std::string name = fs::relative(it->path(), folder_).string();
      std::replace(name.begin(), name.end(), '/', '_');
      fs::create_directories(MMDB_COOK_REPORTS);
      std::ofstream(
          fs::path(MMDB_COOK_REPORTS) / (prefix + std::to_string(++kept_count_) + "-" + name),
          std::ios::binary)
          << text;
    }
  }

  // Runs mmcook in the test's folder, so messages name files as written here.
  CliRun mmcook(const std::vector<std::string>& args) {
    std::string command =
        "cd " + quoted(folder_.string()) + " && " + shell_prefix_ + quoted(MMCOOK_PATH);
    for (const std::string& arg : args) command += " " + quoted(arg);
    command += " > stdout.txt 2> stderr.txt";
    const int status = std::system(command.c_str());
    CliRun run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = readFile(folder_ / "stdout.txt");
    run.err = readFile(folder_ / "stderr.txt");
    fs::remove(folder_ / "stdout.txt");
    fs::remove(folder_ / "stderr.txt");
    keepCookReports();
    return run;
  }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(folder_ / name, std::ios::binary) << text;
  }

  // A failing cook: exit 1, exactly the line `printed` on stderr after the warnings ("FILE:LINE:
  // error: ..." or "mmcook: error: ..."), no output created, an existing output left as it was.
  void expectCookFails(const std::vector<std::string>& inputs, const std::string& printed) {
    std::vector<std::string> args{"cook"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.insert(args.end(), {"-o", "new.mmdb"});
    const CliRun fresh = mmcook(args);
    EXPECT_EQ(fresh.exit_code, 1) << fresh.err;
    const std::string expected = printed + "\n";
    ASSERT_GE(fresh.err.size(), expected.size()) << fresh.err;
    EXPECT_EQ(fresh.err.substr(fresh.err.size() - expected.size()), expected);
    EXPECT_EQ(fresh.out, "");
    EXPECT_FALSE(fs::exists(folder_ / "new.mmdb"));

    write("old.mmdb", "previous contents");
    args[args.size() - 1] = "old.mmdb";
    const CliRun over = mmcook(args);
    EXPECT_EQ(over.exit_code, 1) << over.err;
    EXPECT_EQ(readFile(folder_ / "old.mmdb"), "previous contents");
    for (const auto& entry : fs::directory_iterator(folder_))
      EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }

  // raw.toml: a walk (mirrored) and a turn of 200 s each, with a cost bias, raw poses at 60 Hz:
  // 27 MB of poses, enough to be written during the cook. Returns the walk's text.
  std::string writeLargeRawCook() {
    WalkOptions walk;
    walk.frames = 6000;
    const std::string walk_text = walkBvh(walk);
    write("walk.bvh", walk_text);
    WalkOptions turn = walk;
    turn.turn = 1.2;
    turn.speed = 90;
    write("turn.bvh", walkBvh(turn));
    write("raw.toml",
          "[database]\nframe_rate = 60\n\n[compression]\npose = \"none\"\n\n"
          "[[clip]]\nsource = \"walk.bvh\"\nmirror = true\n\n"
          "[[clip]]\nsource = \"turn.bvh\"\nbias = 0.25\n");
    return walk_text;
  }

  // A walk and a turn that cook with the defaults.
  void writeGoodClips() {
    write("walk.bvh", walkBvh({}));
    WalkOptions turn;
    turn.turn = 1.2;
    turn.speed = 90;
    turn.frames = 180;
    write("turn.bvh", walkBvh(turn));
  }

  fs::path folder_;
  std::string shell_prefix_;  // shell commands run before mmcook, in its shell
  std::map<std::string, std::string> kept_reports_;  // path: the text last copied
  int kept_count_ = 0;
};

constexpr const char* kManifest = R"(# A small locomotion database
[database]
frame_rate = 60

[skeleton]
preset = "geno"

[[clip]]
source = "walk.bvh"
tags = ["locomotion"]
mirror = true

  [[clip.range]]
  seconds = [2, 3]
  tags = ["turn"]

[[clip]]
source = "turn.bvh"
name = "turning"
frames = [10, 170]
tags = ["locomotion"]
)";

// ---------------------------------------------------------------------------------------------
// A tiny JSON reader, enough to check that `inspect --json` is valid JSON and read fields back.

struct Json;
using JsonObject = std::map<std::string, Json>;
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> value;
  const Json& operator[](const std::string& key) const {
    return std::get<JsonObject>(value).at(key);
  }
  const Json& operator[](size_t i) const { return std::get<JsonArray>(value).at(i); }
  double number() const { return std::get<double>(value); }
  const std::string& string() const { return std::get<std::string>(value); }
  size_t size() const { return std::get<JsonArray>(value).size(); }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : s_(text) {}
  Json document() {
    Json j = value();
    space();
    if (i_ != s_.size()) throw std::runtime_error("text after the JSON value");
    return j;
  }

 private:
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  char peek() {
    space();
    if (i_ >= s_.size()) throw std::runtime_error("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c)
      throw std::runtime_error(std::string("expected ") + c + " at " + std::to_string(i_));
    ++i_;
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= s_.size()) throw std::runtime_error("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20)
        throw std::runtime_error("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = s_.at(i_++);
      if (e == 'u') {
        const unsigned code = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
        i_ += 4;
        out += code < 0x80 ? static_cast<char>(code) : '?';
      } else {
        const std::string from = "\"\\/bfnrt", to = "\"\\/\b\f\n\r\t";
        const size_t k = from.find(e);
        if (k == std::string::npos) throw std::runtime_error("bad escape");
        out += to[k];
      }
    }
  }
  Json value() {
    const char c = peek();
    if (c == '{') {
      ++i_;
      JsonObject object;
      if (peek() == '}') return ++i_, Json{object};
      while (true) {
        std::string key = string();
        expect(':');
        object.emplace(std::move(key), value());
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect('}');
        return Json{object};
      }
    }
    if (c == '[') {
      ++i_;
      JsonArray array;
      if (peek() == ']') return ++i_, Json{array};
      while (true) {
        array.push_back(value());
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        return Json{array};
      }
    }
    if (c == '"') return Json{string()};
    if (literal("true")) return Json{true};
    if (literal("false")) return Json{false};
    if (literal("null")) return Json{nullptr};
    size_t used = 0;
    const double number = std::stod(s_.substr(i_, 64), &used);
    if (used == 0) throw std::runtime_error("bad value");
    i_ += used;
    return Json{number};
  }
  const std::string& s_;
  size_t i_ = 0;
};

TEST(JsonWriter, EscapesAndNestsIntoValidJson) {
  std::ostringstream out;
  {
    mmdb::cook::JsonWriter json(out);
    json.beginObject();
    json.field("quote\"back\\slash", std::string("tab\tnew\nline\x01\x7f"));
    json.field("latin1", std::string("caf\xe9"));
    json.field("utf8", std::string("caf\xc3\xa9"));
    json.field("float", 0.15f).field("double", 0.1).field("nan", std::nan(""));
    json.field("big", uint64_t{18446744073709551615ull}).field("negative", -3);
    json.key("empty").beginArray().endArray();
    json.key("list").beginArray().value(true).null().beginObject().endObject().endArray();
    json.endObject();
  }
  EXPECT_EQ(out.str(),
            "{\n"
            "  \"quote\\\"back\\\\slash\": \"tab\\tnew\\nline\\u0001\\u007f\",\n"
            "  \"latin1\": \"caf\\ufffd\",\n"
            "  \"utf8\": \"caf\xc3\xa9\",\n"
            "  \"float\": 0.15,\n"
            "  \"double\": 0.1,\n"
            "  \"nan\": null,\n"
            "  \"big\": 18446744073709551615,\n"
            "  \"negative\": -3,\n"
            "  \"empty\": [],\n"
            "  \"list\": [\n"
            "    true,\n"
            "    null,\n"
            "    {}\n"
            "  ]\n"
            "}\n");
}

// ---------------------------------------------------------------------------------------------
// Success paths

TEST_F(Cli, QuickFormCooksMotionFilesWithDefaults) {
  writeGoodClips();
  const CliRun run = mmcook({"cook", "walk.bvh", "turn.bvh", "-o", "out.mmdb"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(fs::exists(folder_ / "out.mmdb"));
  EXPECT_NE(run.out.find("cooked out.mmdb\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  clips        2 (0 mirrored) from 2 sources\n"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("preset geno"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  unit scale   0.01 m per source unit"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  from         command line (default settings)\n"), std::string::npos);
}

TEST_F(Cli, ManifestCookVerifiesAndInspects) {
  writeGoodClips();
  write("loco.toml", kManifest);
  const CliRun cook = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--verify"});
  ASSERT_EQ(cook.exit_code, 0) << cook.err;
  EXPECT_NE(cook.out.find("  clips        3 (1 mirrored) from 2 sources\n"), std::string::npos)
      << cook.out;
  EXPECT_NE(cook.out.find(", verified\n"), std::string::npos) << cook.out;
  EXPECT_NE(cook.out.find("  tags         "), std::string::npos);
  EXPECT_NE(cook.out.find("  poses        meshopt, within 0.1 mm (shell 30 mm), 0.001 m/s, "
                          "0.01 rad/s\n    local_rotations "),
            std::string::npos)
      << cook.out;

  const CliRun inspect = mmcook({"inspect", "out.mmdb"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("schema      2.2\n"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("requires    CodedPoses, RangeBounds\n"), std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find(std::string("cooker      ") + mmdb::cook::kCookerVersion + "\n"),
            std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find("skeleton    preset geno"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("  [0] walk.bvh  bvh, "), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find(" turning "), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("sections (bytes)\n"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("poses       coded in segments of 1024 frames, within 0.1 mm (shell "
                             "30 mm), 0.001 m/s, 0.01 rad/s\n  local_rotations            "),
            std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find("  local_rotations (coded)  "), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find(" rad/s at joint "), std::string::npos) << inspect.out;
  EXPECT_EQ(inspect.err, "");
}

TEST_F(Cli, InspectJsonIsValidAndCarriesTheFileFields) {
  writeGoodClips();
  write("loco.toml", kManifest);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--quiet"}).exit_code, 0);
  const CliRun run = mmcook({"inspect", "out.mmdb", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Json doc;
  try {
    doc = JsonReader(run.out).document();
  } catch (const std::exception& e) {
    FAIL() << "not JSON (" << e.what() << "):\n" << run.out;
  }
  EXPECT_EQ(doc["schema_version"]["major"].number(), 2);
  EXPECT_EQ(doc["schema_version"]["minor"].number(), 2);
  // Coded by default; the clips' unmatchable last frames lie outside the boxes of the others.
  ASSERT_EQ(doc["required_features"].size(), 2u);
  EXPECT_EQ(doc["required_features"][0].string(), "CodedPoses");
  EXPECT_EQ(doc["required_features"][1].string(), "RangeBounds");
  EXPECT_EQ(doc["cooker_version"].string(), mmdb::cook::kCookerVersion);
  const Json& coding = doc["pose_coding"];
  EXPECT_EQ(coding["segment_frames"].number(), 1024);
  ASSERT_EQ(coding["streams"].size(), 4u);
  const Json& translations = coding["streams"][1];
  EXPECT_EQ(translations["name"].string(), "local_translations");
  EXPECT_TRUE(std::get<bool>(translations["coded"].value));
  // A BVH's joints below the root keep their bind offsets: constant tracks.
  EXPECT_GE(translations["constant_tracks"].number(), 1);
  EXPECT_LE(translations["max_error"].number(), 1e-4);
  EXPECT_EQ(doc["frame_rate"].number(), 60);
  EXPECT_EQ(doc["file_size"].number(), static_cast<double>(fs::file_size(folder_ / "out.mmdb")));
  EXPECT_EQ(doc["feature_count"].number(), 27);
  EXPECT_EQ(doc["skeleton"]["preset"].string(), "geno");
  EXPECT_EQ(doc["skeleton"]["roles"]["left_foot"]["name"].string(), "LeftFoot");
  ASSERT_EQ(doc["clips"].size(), 3u);
  EXPECT_EQ(doc["clips"][0]["name"].string(), "walk");
  EXPECT_EQ(doc["clips"][0]["first_frame"].number(), 0);
  EXPECT_EQ(doc["clips"][0]["tags"][0].string(), "locomotion");
  double frames = 0;
  for (size_t c = 0; c < doc["clips"].size(); ++c)
    frames += doc["clips"][c]["frame_count"].number();
  EXPECT_EQ(doc["frame_count"].number(), frames);
  EXPECT_EQ(doc["sources"][0]["path"].string(), "walk.bvh");
  EXPECT_EQ(doc["sources"][0]["content_hash"].string().size(), 16u);
  EXPECT_EQ(doc["sources"][1]["size_bytes"].number(),
            static_cast<double>(fs::file_size(folder_ / "turn.bvh")));
  EXPECT_EQ(doc["sections"]["features"]["bytes"].number(),
            frames * doc["feature_stride"].number() * 4);
  EXPECT_EQ(doc["feature_blocks"].size(), 7u);
  EXPECT_GT(doc["ranges"].size(), 0u);
}

// Cost biases from the manifest: in the file (a clip's, and its range's added to it), shown by
// inspect and inspect --json; a cook without biases stores none.
TEST_F(Cli, InspectShowsCostBiases) {
  writeGoodClips();
  std::string manifest = kManifest;
  manifest.replace(manifest.find("mirror = true\n"), 14,
                   "mirror = true\nbias = 0.25\n\n  [[clip.range]]\n  frames = [10, 40]\n"
                   "  bias = -0.75\n");
  write("loco.toml", manifest);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--quiet"}).exit_code, 0);
  const CliRun text = mmcook({"inspect", "out.mmdb"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(", bias 0.25  tags: locomotion\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(30 frames)  bias -0.5  tags: locomotion\n"), std::string::npos)
      << text.out;
  const CliRun run = mmcook({"inspect", "out.mmdb", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json doc = JsonReader(run.out).document();
  EXPECT_EQ(doc["clips"][0]["bias"].number(), 0.25);
  EXPECT_EQ(doc["clips"][1]["bias"].number(), 0.25);  // the mirrored copy
  EXPECT_EQ(doc["clips"][2]["bias"].number(), 0);
  EXPECT_EQ(doc["ranges"][0]["bias"].number(), 0.25);
  EXPECT_EQ(doc["ranges"][1]["first_frame"].number(), 10);
  EXPECT_EQ(doc["ranges"][1]["bias"].number(), -0.5);

  write("plain.toml", kManifest);
  ASSERT_EQ(mmcook({"cook", "plain.toml", "-o", "plain.mmdb", "--quiet"}).exit_code, 0);
  const CliRun plain = mmcook({"inspect", "plain.mmdb"});
  EXPECT_EQ(plain.out.find("bias"), std::string::npos) << plain.out;
}

// --report: one JSON object with the summary's facts, every warning with its code, source and
// clip, the stages' times and the output's FNV-1a 64; on success under --quiet the warnings
// alone are printed.
TEST_F(Cli, ReportHasTheSummaryWarningsWithTheirClipStagesAndHash) {
  writeGoodClips();
  WalkOptions brief;
  brief.frames = 20;  // 0.67 s: shorter than the facing filter's window: a warning about this clip
  write("short.bvh", walkBvh(brief));
  const CliRun run =
      mmcook({"cook", "walk.bvh", "short.bvh", "-o", "out.mmdb", "--report", "out.json", "-q"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(
      run.err,
      "mmcook: warning: clip short: 39 frames is shorter than the facing window of 61 frames; "
      "using 39\n");
  Json doc;
  try {
    doc = JsonReader(readFile(folder_ / "out.json")).document();
  } catch (const std::exception& e) {
    FAIL() << "not JSON (" << e.what() << "):\n" << readFile(folder_ / "out.json");
  }
  const std::string bytes = readFile(folder_ / "out.mmdb");
  uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  EXPECT_EQ(doc["format"].number(), 1);
  EXPECT_EQ(doc["command"].string(), "cook");
  EXPECT_EQ(doc["status"].string(), "ok");
  EXPECT_EQ(doc["output"].string(), "out.mmdb");
  EXPECT_EQ(doc["output_bytes"].number(), static_cast<double>(bytes.size()));
  EXPECT_EQ(doc["output_fnv1a64"].string(), hex);
  EXPECT_FALSE(std::get<bool>(doc["unchanged"].value));
  EXPECT_EQ(doc["clips"].number(), 2);
  EXPECT_EQ(doc["sources"].number(), 2);
  EXPECT_EQ(doc["frame_rate"].number(), 60);
  EXPECT_EQ(doc["preset"].string(), "geno");
  EXPECT_EQ(doc["unit_scale_origin"].string(), "preset");
  ASSERT_EQ(doc["roles"].size(), 7u);
  EXPECT_EQ(doc["roles"][0]["role"].string(), "hips");
  EXPECT_EQ(doc["roles"][0]["joint"].string(), "Hips");
  EXPECT_EQ(doc["roles"][0]["index"].number(), 0);
  ASSERT_EQ(doc["warnings"].size(), 1u);
  EXPECT_EQ(doc["warning_count"].number(), 1);
  const Json& w = doc["warnings"][0];
  EXPECT_EQ(w["code"].string(), "filter-window-shortened");
  EXPECT_EQ(w["clip"].string(), "short");
  EXPECT_EQ(w["source"].string(), "short.bvh");
  EXPECT_NE(w["message"].string().find("window"), std::string::npos) << w["message"].string();
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(w["manifest_line"].value));  // no manifest
  std::vector<std::string> stages;
  for (size_t i = 0; i < doc["stages"].size(); ++i) {
    stages.push_back(doc["stages"][i]["stage"].string());
    EXPECT_GE(doc["stages"][i]["seconds"].number(), 0.0);
  }
  EXPECT_EQ(stages, (std::vector<std::string>{"source-hashes", "clips", "assembly",
                                              "pose-compression", "serialization", "write"}));
  // Per pose stream: raw and coded sizes, and the worst error with its joint and frame.
  const Json& compression = doc["compression"];
  EXPECT_EQ(compression["pose"].string(), "meshopt");
  EXPECT_NEAR(compression["position_tolerance_m"].number(), 0.0001, 1e-9);
  ASSERT_EQ(compression["streams"].size(), 4u);
  const Json& rotations = compression["streams"][0];
  EXPECT_EQ(rotations["name"].string(), "local_rotations");
  EXPECT_EQ(rotations["raw_bytes"].number(), doc["frames"].number() * doc["joints"].number() * 16);
  EXPECT_LT(rotations["coded_bytes"].number(), rotations["raw_bytes"].number() / 2);
  EXPECT_GT(rotations["ratio"].number(), 2);
  EXPECT_LE(rotations["max_error"].number(), 1e-4);
  EXPECT_EQ(rotations["error_unit"].string(), "m");
  EXPECT_NE(rotations["worst_joint"].string(), "");
  EXPECT_LT(rotations["worst_frame"].number(), doc["frames"].number());
  EXPECT_EQ(compression["streams"][3]["error_unit"].string(), "rad/s");

  // The same cook again: the file is left as it was, and the report says so.
  ASSERT_EQ(
      mmcook({"cook", "walk.bvh", "short.bvh", "-o", "out.mmdb", "--report", "out.json"}).exit_code,
      0);
  EXPECT_TRUE(
      std::get<bool>(JsonReader(readFile(folder_ / "out.json")).document()["unchanged"].value));
}

// With pose = "none" the report's compression names the raw streams and their sizes alone.
TEST_F(Cli, ARawCookReportsItsRawStreams) {
  writeGoodClips();
  write("raw.toml",
        "[compression]\npose = \"none\"\n\n[[clip]]\nsource = \"walk.bvh\"\n\n"
        "[[clip]]\nsource = \"turn.bvh\"\n");
  const CliRun run = mmcook({"cook", "raw.toml", "-o", "raw.mmdb", "--report", "raw.json", "-q"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json doc = JsonReader(readFile(folder_ / "raw.json")).document();
  const Json& compression = doc["compression"];
  EXPECT_EQ(compression["pose"].string(), "none");
  ASSERT_EQ(compression["streams"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const JsonObject& stream = std::get<JsonObject>(compression["streams"][i].value);
    EXPECT_EQ(stream.size(), 3u);  // name, raw_bytes, coded_bytes
    EXPECT_EQ(stream.at("coded_bytes").number(), stream.at("raw_bytes").number());
  }
  std::vector<std::string> stages;
  for (size_t i = 0; i < doc["stages"].size(); ++i)
    stages.push_back(doc["stages"][i]["stage"].string());
  EXPECT_EQ(stages, (std::vector<std::string>{"source-hashes", "clips", "assembly", "serialization",
                                              "write"}));
}

// A BVH whose header declares one frame more than it holds: the import warns, and reads it.
std::string declaringOneFrameMore(std::string bvh) {
  const size_t at = bvh.find("Frames:");
  const size_t end = bvh.find('\n', at);
  const int frames = std::stoi(bvh.substr(at + 7, end - at - 7));
  return bvh.replace(at, end - at, "Frames: " + std::to_string(frames + 1));
}

int lineOf(const std::string& text, const std::string& prefix);  // below

// Warnings as a compiler gives them: each counted, coded and placed (file and line, manifest
// line), shown again when the clip comes from the cache, hidden by -w but still reported, and
// failing the cook under --werror with nothing written.
TEST_F(Cli, WarningsAreCountedCodedPlacedAndShownAgainOnACacheHit) {
  writeGoodClips();
  const std::string walk = declaringOneFrameMore(walkBvh({}));
  write("walk.bvh", walk);
  write("loco.toml", kManifest);
  const std::string warning =
      "walk.bvh:" + std::to_string(lineOf(walk, "Frames:")) + ": warning: declares ";
  for (int pass = 0; pass < 2; ++pass) {  // cooked, then from the cache
    const CliRun run = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--report", "out.json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find(warning), std::string::npos) << pass << run.err;
    EXPECT_NE(run.out.find("  warnings     1\n"), std::string::npos) << run.out;
    const Json doc = JsonReader(readFile(folder_ / "out.json")).document();
    EXPECT_EQ(doc["clip_cache"]["hits"].number(), pass == 0 ? 0 : 2);
    ASSERT_EQ(doc["warnings"].size(), 1u);
    const Json& w = doc["warnings"][0];
    EXPECT_EQ(w["code"].string(), "bvh-frame-count");
    EXPECT_EQ(fs::path(w["file"].string()).filename(), "walk.bvh");
    EXPECT_EQ(w["line"].number(), lineOf(walk, "Frames:"));
    EXPECT_EQ(w["clip"].string(), "walk");
    EXPECT_EQ(w["manifest"].string(), "loco.toml");
    EXPECT_EQ(w["manifest_line"].number(), lineOf(kManifest, "[[clip]]"));
  }
  // -q prints the warnings alone; -w hides them too, and the report still holds them.
  const CliRun quiet = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "-q"});
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err.rfind(warning, 0), 0u) << quiet.err;
  const CliRun hidden =
      mmcook({"cook", "loco.toml", "-o", "out.mmdb", "-q", "-w", "--report", "hidden.json"});
  EXPECT_EQ(hidden.exit_code, 0);
  EXPECT_EQ(hidden.err, "");
  EXPECT_EQ(JsonReader(readFile(folder_ / "hidden.json")).document()["warnings"].size(), 1u);

  // --werror: exit 1, no database, and a report that says why.
  const CliRun strict =
      mmcook({"cook", "loco.toml", "-o", "strict.mmdb", "--werror", "--report", "strict.json"});
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find(warning), std::string::npos) << strict.err;
  EXPECT_NE(
      strict.err.find("mmcook: error: 1 warning and --werror: nothing written to strict.mmdb"),
      std::string::npos)
      << strict.err;
  EXPECT_FALSE(fs::exists(folder_ / "strict.mmdb"));
  const Json failed = JsonReader(readFile(folder_ / "strict.json")).document();
  EXPECT_EQ(failed["status"].string(), "failed");
  EXPECT_EQ(failed["error"]["code"].string(), "warnings-as-errors");
  EXPECT_EQ(failed["error"]["exit_code"].number(), 1);
  EXPECT_EQ(failed["warnings"].size(), 1u);
  for (const auto& entry : fs::directory_iterator(folder_))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();

  // The same per clip: the warned clip fails (cooked now or already), the other does not.
  const CliRun part = mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "w.mmclip", "-q"});
  EXPECT_EQ(part.exit_code, 0);
  EXPECT_EQ(part.err.rfind(warning, 0), 0u) << part.err;
  const CliRun strict_part =
      mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "w.mmclip", "-q", "--werror"});
  EXPECT_EQ(strict_part.exit_code, 1);
  const std::string clip_line = "loco.toml:" + std::to_string(lineOf(kManifest, "[[clip]]"));
  EXPECT_NE(strict_part.err.find(clip_line + ": error: clip walk: 1 warning and --werror"),
            std::string::npos)
      << strict_part.err;
  fs::remove(folder_ / "w.mmclip");
  EXPECT_EQ(
      mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "w.mmclip", "--werror"}).exit_code,
      1);
  EXPECT_FALSE(fs::exists(folder_ / "w.mmclip"));
  // Several clips in one run: the warned clip (the first, cooked first) fails before any part.
  const CliRun strict_two = mmcook({"cook-clip", "loco.toml", "--index", "1", "--index", "0", "-o",
                                    "t.mmclip", "-o", "w.mmclip", "-q", "--werror"});
  EXPECT_EQ(strict_two.exit_code, 1);
  EXPECT_NE(strict_two.err.find(clip_line +
                                ": error: clip walk: 1 warning and --werror: nothing written to "
                                "w.mmclip"),
            std::string::npos)
      << strict_two.err;
  EXPECT_FALSE(fs::exists(folder_ / "w.mmclip"));
  EXPECT_FALSE(fs::exists(folder_ / "t.mmclip"));
  const CliRun clean =
      mmcook({"cook-clip", "loco.toml", "--index", "1", "-o", "t.mmclip", "-q", "--werror"});
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.err, "");
}

std::vector<std::string> lines(const std::string& text);  // below

// Every warning and error line of a cook is in the compiler's form that IDEs and CI problem
// matchers read, FILE:LINE: warning|error: message, at the right place: a source's line (a BVH's
// Frames:), the [[clip]] line of the clip a warning is about, the line of the range an error is
// about. Under --quiet the log is those lines alone; without, they are its only such lines.
TEST_F(Cli, DiagnosticsAreInTheFormProblemMatchersRead) {
  writeGoodClips();
  const std::string walk = declaringOneFrameMore(walkBvh({}));
  write("walk.bvh", walk);
  WalkOptions brief;
  brief.frames = 20;  // shorter than the facing filter's window: a warning about the clip
  write("short.bvh", walkBvh(brief));
  const std::string manifest =
      "[skeleton]\npreset = \"geno\"\n"                              // 1-2
      "[[clip]]\nsource = \"walk.bvh\"\n"                            // 3-4
      "[[clip]]\nsource = \"short.bvh\"\n"                           // 5-6
      "[[clip]]\nsource = \"turn.bvh\"\nname = \"turning\"\n"        // 7-9
      "  [[clip.range]]\n  frames = [0, 5000]\n  tags = [\"x\"]\n";  // 10-12
  write("diag.toml", manifest);
  // A problem matcher's expression (GitHub's and VS Code's gcc matchers are of this form), as a
  // POSIX extended one (\d is [0-9]).
  regex_t matcher;
  ASSERT_EQ(regcomp(&matcher, "^(.+):([0-9]+):([0-9]+:)? (warning|error): (.+)$", REG_EXTENDED), 0);
  for (const bool quiet : {true, false}) {
    SCOPED_TRACE(quiet ? "--quiet" : "not quiet");
    std::vector<std::string> args{"cook", "diag.toml", "-o", "diag.mmdb"};
    if (quiet) args.push_back("-q");
    const CliRun run = mmcook(args);
    EXPECT_EQ(run.exit_code, 1) << run.err;
    std::vector<std::string> places;  // "FILE:LINE: severity" of each diagnostic, in order
    for (const std::string& line : lines(run.err)) {
      if (line.empty()) continue;
      const bool diagnostic =
          line.find("warning") != std::string::npos || line.find("error") != std::string::npos;
      if (!quiet && !diagnostic) continue;  // the log's other lines (progress, information)
      regmatch_t m[6];
      if (regexec(&matcher, line.c_str(), 6, m, 0) != 0) {
        ADD_FAILURE() << "not in the matcher's form: " << line;
        continue;
      }
      const auto group = [&](int i) { return line.substr(m[i].rm_so, m[i].rm_eo - m[i].rm_so); };
      places.push_back(fs::path(group(1)).filename().string() + ":" + group(2) + ": " + group(4));
    }
    EXPECT_EQ(places, (std::vector<std::string>{
                          "walk.bvh:" + std::to_string(lineOf(walk, "Frames:")) + ": warning",
                          "diag.toml:5: warning", "diag.toml:10: error"}))
        << run.err;
    EXPECT_NE(run.err.find("diag.toml:5: warning: clip short: 39 frames is shorter than the "
                           "facing window of 61 frames; using 39\n"),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find("diag.toml:10: error: clip turning: range frames [0, 5000) does not "
                           "lie inside the clip's "),
              std::string::npos)
        << run.err;
    EXPECT_FALSE(fs::exists(folder_ / "diag.mmdb"));
  }
  regfree(&matcher);
  // A message that names no line of a file is mmcook's, in the same form less the line.
  const CliRun usage = mmcook({"cook", "diag.toml", "-o", "x.mmdb", "--report", "x.mmdb"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(usage.err,
            "mmcook: error: --report and -o name the same file 'x.mmdb'\nRun with --help for more "
            "information.\n");
  const CliRun parse = mmcook({"cook", "diag.toml", "-o", "x.mmdb", "--frobnicate"});
  EXPECT_EQ(parse.exit_code, 2);
  EXPECT_EQ(parse.err.rfind("mmcook: error: The following argument was not expected: --frobnicate\n"
                            "Run with --help for more information.",
                            0),
            0u)
      << parse.err;
  const CliRun missing = mmcook({"cook", "nowhere.toml", "-o", "x.mmdb"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("mmcook: error: nowhere.toml: cannot open: ", 0), 0u) << missing.err;
}

// -v says why a cook took no part from the cache, once per cause.
TEST_F(Cli, VerboseSaysWhatInvalidatedTheCachedParts) {
  writeGoodClips();
  write("loco.toml", kManifest);
  const CliRun first = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "-v"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("clip cache: 2 clips cooked again: a clip the cache has not seen"),
            std::string::npos)
      << first.err;
  write("loco.toml", std::string(kManifest) + "[contacts]\nspeed_threshold = 0.3\n");
  const CliRun edited = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "-v"});
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  const std::string line = "clip cache: 2 clips cooked again: [contacts] ('contacts ";
  const size_t at = edited.err.find(line);
  EXPECT_NE(at, std::string::npos) << edited.err;
  EXPECT_EQ(edited.err.find(line, at + 1), std::string::npos) << edited.err;  // once
  write("turn.bvh", walkBvh({}));
  const CliRun source = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "-v"});
  EXPECT_NE(source.err.find("clip cache: 1 clip cooked again: the source file's content"),
            std::string::npos)
      << source.err;
}

TEST_F(Cli, WerrorWithoutAWarningCooks) {
  writeGoodClips();
  const CliRun run = mmcook({"cook", "walk.bvh", "turn.bvh", "-o", "out.mmdb", "--werror", "-q"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(fs::is_regular_file(folder_ / "out.mmdb"));
}

// A tool that reads the report after a failed cook reads the failure, never the last success.
TEST_F(Cli, AFailedCookLeavesAReportOfTheFailure) {
  writeGoodClips();
  write("loco.toml", kManifest);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--report", "out.json"}).exit_code, 0);
  EXPECT_EQ(JsonReader(readFile(folder_ / "out.json")).document()["status"].string(), "ok");
  std::string broken = kManifest;
  broken.replace(broken.find("frame_rate = 60"), 15, "frame_rate = -5");
  write("loco.toml", broken);
  const CliRun run = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--report", "out.json"});
  EXPECT_EQ(run.exit_code, 1);
  const Json doc = JsonReader(readFile(folder_ / "out.json")).document();
  EXPECT_EQ(doc["format"].number(), 1);
  EXPECT_EQ(doc["status"].string(), "failed");
  EXPECT_EQ(doc["error"]["code"].string(), "bad-input");
  EXPECT_EQ(doc["error"]["file"].string(), "loco.toml");
  EXPECT_EQ(doc["error"]["line"].number(), lineOf(broken, "frame_rate"));
  // The message whole, its place first; printed with the place in front of "error:".
  const std::string place = "loco.toml:" + std::to_string(lineOf(broken, "frame_rate")) + ": ";
  const std::string message = doc["error"]["message"].string();
  ASSERT_EQ(message.rfind(place, 0), 0u) << message;
  EXPECT_EQ(place + "error: " + message.substr(place.size()) + "\n", run.err);
  EXPECT_EQ(doc["output"].string(), "out.mmdb");
  EXPECT_EQ(doc["manifest"].string(), "loco.toml");  // though reading it failed
  // A mistake on the command line: exit 2, and the report says so.
  const CliRun usage = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--report", "out.json",
                               "--cache", "c", "--no-cache"});
  EXPECT_EQ(usage.exit_code, 2);
  const Json usage_doc = JsonReader(readFile(folder_ / "out.json")).document();
  EXPECT_EQ(usage_doc["status"].string(), "failed");
  EXPECT_EQ(usage_doc["error"]["code"].string(), "bad-usage");
  EXPECT_EQ(usage_doc["error"]["exit_code"].number(), 2);

  // A report path that cannot be written: said before anything is cooked.
  write("loco.toml", kManifest);
  fs::create_directories(folder_ / "folder");
  const CliRun folder = mmcook({"cook", "loco.toml", "-o", "new.mmdb", "--report", "folder"});
  EXPECT_EQ(folder.exit_code, 1);
  EXPECT_NE(folder.err.find("folder"), std::string::npos) << folder.err;
  EXPECT_EQ(folder.err.find("warning"), std::string::npos) << folder.err;
  EXPECT_FALSE(fs::exists(folder_ / "new.mmdb"));
  // A report over an input is refused, and the input kept.
  const std::string source = readFile(folder_ / "walk.bvh");
  EXPECT_NE(mmcook({"cook", "loco.toml", "-o", "new.mmdb", "--report", "walk.bvh"}).exit_code, 0);
  EXPECT_EQ(readFile(folder_ / "walk.bvh"), source);
}

TEST_F(Cli, JobsDoNotChangeTheBytes) {
  writeGoodClips();
  write("loco.toml", kManifest);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "one.mmdb", "--jobs", "1"}).exit_code, 0);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "two.mmdb", "--jobs", "2"}).exit_code, 0);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "all.mmdb"}).exit_code, 0);
  const std::string one = readFile(folder_ / "one.mmdb");
  EXPECT_GT(one.size(), 1000u);
  EXPECT_TRUE(one == readFile(folder_ / "two.mmdb"));
  EXPECT_TRUE(one == readFile(folder_ / "all.mmdb"));
}

TEST_F(Cli, QuietPrintsNothingOnSuccess) {
  writeGoodClips();
  const CliRun run = mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--quiet"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "");
}

// --depfile names the manifest, every source and mmcook itself, as absolute paths, so a build
// system re-cooks when any of them changes.
TEST_F(Cli, DepfileListsTheManifestEverySourceAndTheCooker) {
  writeGoodClips();
  write("loco.toml", kManifest);
  const CliRun run = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--depfile", "out.mmdb.d"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string folder = fs::canonical(folder_).string();
  const std::string expected = folder + "/out.mmdb: \\\n  " + folder + "/loco.toml \\\n  " +
                               folder + "/walk.bvh \\\n  " + folder + "/turn.bvh \\\n  " +
                               fs::canonical(MMCOOK_PATH).string() + "\n";
  EXPECT_EQ(readFile(folder_ / "out.mmdb.d"), expected);
}

// A depfile or report written over the database (or over each other) would lose one of them.
TEST_F(Cli, DepfileAndReportMayNotBeTheOutput) {
  writeGoodClips();
  const CliRun depfile = mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--depfile", "./out.mmdb"});
  EXPECT_EQ(depfile.exit_code, 2);
  EXPECT_EQ(depfile.err.rfind("mmcook: error: --depfile and -o name the same file 'out.mmdb'", 0),
            0u)
      << depfile.err;
  const CliRun report = mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--report", "out.mmdb"});
  EXPECT_EQ(report.exit_code, 2);
  EXPECT_EQ(report.err.rfind("mmcook: error: --report and -o name the same file 'out.mmdb'", 0), 0u)
      << report.err;
  const CliRun both =
      mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--report", "x.d", "--depfile", "x.d"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb"));
  write("loco.toml", kManifest);
  const CliRun clip =
      mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "w.mmclip", "--depfile", "w.mmclip"});
  EXPECT_EQ(clip.exit_code, 2);
  EXPECT_FALSE(fs::exists(folder_ / "w.mmclip"));
}

TEST_F(Cli, DepfileInAMissingFolderFailsBeforeTheCook) {
  writeGoodClips();
  const CliRun run = mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--depfile", "no/out.d"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("no/out.d"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb"));
}

// Identical bytes are not rewritten: the file keeps its modification time (and inode), so a
// build's restat skips what depends on it. Different bytes replace it.
TEST_F(Cli, AnUnchangedOutputIsNotRewritten) {
  writeGoodClips();
  ASSERT_EQ(mmcook({"cook", "walk.bvh", "-o", "out.mmdb"}).exit_code, 0);
  struct stat before {};
  ASSERT_EQ(::stat((folder_ / "out.mmdb").c_str(), &before), 0);
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(folder_ / "out.mmdb", old_time);
  ASSERT_EQ(mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--verify"}).exit_code, 0);
  struct stat after {};
  ASSERT_EQ(::stat((folder_ / "out.mmdb").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(fs::last_write_time(folder_ / "out.mmdb"), old_time);

  ASSERT_EQ(mmcook({"cook", "walk.bvh", "turn.bvh", "-o", "out.mmdb"}).exit_code, 0);
  EXPECT_NE(fs::last_write_time(folder_ / "out.mmdb"), old_time);
}

// A raw cook of a large database writes each clip's poses while the other clips cook (-v says
// so). The file is the one a write after the cook gives: the same for any job count, verified
// by --verify, the same when the poses are released as they are written (no --verify, a new
// output), and the same as when the clips come from the cache (nothing written during the cook),
// also when they do not fit the layout their headers gave (a file that declares one frame more
// than it holds), which after a release makes the cook again.
TEST_F(Cli, ALargeRawCookWritesItsPosesWhileTheClipsCook) {
  const std::string walk_text = writeLargeRawCook();
  const auto cook = [&](const std::string& out, const std::string& jobs,
                        const std::string& cache = "", bool verify = true) {
    std::vector<std::string> args{"cook", "raw.toml", "-o", out, "-j", jobs, "-v"};
    if (verify) args.push_back("--verify");
    if (cache.empty())
      args.push_back("--no-cache");
    else
      args.insert(args.end(), {"--cache", cache});
    const CliRun run = mmcook(args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.out + run.err;
  };
  const std::string streamed = "3 of 3 clips' poses were written while the clips cooked";
  EXPECT_NE(cook("one.mmdb", "1").find(streamed), std::string::npos);
  EXPECT_NE(cook("two.mmdb", "2").find(streamed), std::string::npos);
  const std::string one = readFile(folder_ / "one.mmdb");
  EXPECT_GT(one.size(), size_t{27} << 20);
  EXPECT_TRUE(readFile(folder_ / "two.mmdb") == one);
  // Without --verify into a new file, each clip's poses are released once written.
  EXPECT_NE(cook("released.mmdb", "2", "", false).find(streamed), std::string::npos);
  EXPECT_TRUE(readFile(folder_ / "released.mmdb") == one);

  std::string off_by_one = walk_text;
  const size_t frames = off_by_one.find("Frames: 6000\n");
  ASSERT_NE(frames, std::string::npos);
  off_by_one.replace(frames, 12, "Frames: 6001");
  write("walk.bvh", off_by_one);
  EXPECT_NE(cook("again.mmdb", "2", "clips_again")
                .find("the database's layout is not the one its poses were written for"),
            std::string::npos);
  EXPECT_EQ(cook("again_cached.mmdb", "2", "clips_again").find("were written while"),
            std::string::npos);
  EXPECT_TRUE(readFile(folder_ / "again.mmdb") == readFile(folder_ / "again_cached.mmdb"));
  write("walk.bvh", walk_text);
  // The second clip's file declaring a frame more, after the first clip's poses were released:
  // the cook is made again, into the same bytes.
  std::string turn_text = readFile(folder_ / "turn.bvh");
  turn_text.replace(turn_text.find("Frames: 6000\n"), 12, "Frames: 6001");
  write("turn.bvh", turn_text);
  EXPECT_NE(cook("turn_again.mmdb", "2", "", false).find("cooking again"), std::string::npos);
  cook("turn_verified.mmdb", "2");
  EXPECT_TRUE(readFile(folder_ / "turn_again.mmdb") == readFile(folder_ / "turn_verified.mmdb"));
  EXPECT_GT(readFile(folder_ / "turn_again.mmdb").size(), size_t{27} << 20);
  writeLargeRawCook();

  EXPECT_NE(cook("cached.mmdb", "2", "clips").find(streamed), std::string::npos);
  EXPECT_TRUE(readFile(folder_ / "cached.mmdb") == one);
  EXPECT_NE(cook("from_cache.mmdb", "2", "clips")
                .find("0 of 3 clips' poses were written while the clips cooked"),
            std::string::npos);
  EXPECT_TRUE(readFile(folder_ / "from_cache.mmdb") == one);
  for (const auto& entry : fs::directory_iterator(folder_))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

// A large raw cook whose file cannot be written whole (a file-size limit inside the poses that
// are written during the cook) fails with the write's reason, and leaves the existing output as
// it was and no temporary file.
TEST_F(Cli, ALargeRawCookThatCannotBeWrittenLeavesTheOutputAlone) {
  writeLargeRawCook();
  write("out.mmdb", "previous contents");
  // 20,000 blocks of 512 bytes (dash) or 1 KiB (bash): 10 or 20 MB. The signal the limit raises
  // is ignored, so the write fails with EFBIG instead.
  shell_prefix_ = "trap '' XFSZ; ulimit -f 20000; ";
  const CliRun run = mmcook({"cook", "raw.toml", "-o", "out.mmdb", "--no-cache", "-v"});
  // Into a new file, whose poses are released as they are written: the same error, at once.
  const CliRun fresh = mmcook({"cook", "raw.toml", "-o", "new.mmdb", "--no-cache", "-v"});
  shell_prefix_.clear();
  for (const auto& [name, r] : {std::pair{"out.mmdb", run}, std::pair{"new.mmdb", fresh}}) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("mmcook: error: cannot write '" + std::string(name) +
                         "': writing the temporary file failed: " + std::strerror(EFBIG) +
                         "; check that the folder exists"),
              std::string::npos)
        << r.err;
    EXPECT_EQ((r.out + r.err).find("cooking again"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(folder_ / "new.mmdb"));
  EXPECT_EQ(readFile(folder_ / "out.mmdb"), "previous contents");
  for (const auto& entry : fs::directory_iterator(folder_))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

// A manifest cook keeps its clips in the default cache; the next cook takes them from there, and
// the report says so.
TEST_F(Cli, TheDefaultClipCacheServesTheNextCook) {
  writeGoodClips();
  write("loco.toml", kManifest);
  const CliRun cold = mmcook({"cook", "loco.toml", "-o", "cold.mmdb"});
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_NE(cold.out.find("  clip cache   0 of 2 clips from the cache, 2 cooked ("),
            std::string::npos)
      << cold.out;
  const CliRun warm = mmcook({"cook", "loco.toml", "-o", "warm.mmdb", "--report", "warm.json"});
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_NE(warm.out.find("  clip cache   2 of 2 clips from the cache, 0 cooked, pose coding from "
                          "the cache"),
            std::string::npos)
      << warm.out;
  EXPECT_TRUE(readFile(folder_ / "cold.mmdb") == readFile(folder_ / "warm.mmdb"));
  const Json report = JsonReader(readFile(folder_ / "warm.json")).document();
  EXPECT_EQ(report["clip_cache"]["hits"].number(), 2);
  EXPECT_EQ(report["clip_cache"]["misses"].number(), 0);
  EXPECT_EQ(report["clip_cache"]["refused"].number(), 0);
  EXPECT_TRUE(std::get<bool>(report["clip_cache"]["coded_poses_found"].value));
  EXPECT_EQ(report["clip_cache"]["folder"].string(), (folder_ / "cache").string());

  const CliRun none =
      mmcook({"cook", "loco.toml", "-o", "none.mmdb", "--no-cache", "--report", "none.json"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("clip cache"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(
      JsonReader(readFile(folder_ / "none.json")).document()["clip_cache"].value));
  // The quick form uses a cache only when given one.
  const CliRun quick = mmcook({"cook", "walk.bvh", "-o", "quick.mmdb"});
  EXPECT_EQ(quick.out.find("clip cache"), std::string::npos);
  const CliRun given = mmcook({"cook", "walk.bvh", "-o", "quick.mmdb", "--cache", "mine"});
  EXPECT_NE(given.out.find("0 of 1 clips from the cache, 1 cooked (mine)"), std::string::npos);
}

TEST_F(Cli, AnUnusableCacheFailsBeforeTheCook) {
  writeGoodClips();
  write("loco.toml", kManifest);
  write("plain", "a file");
  const CliRun run = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--cache", "plain/cache"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.rfind("mmcook: error: plain/cache: cannot create the clip cache folder: ", 0),
            0u)
      << run.err;
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb"));
  const CliRun both = mmcook({"cook", "loco.toml", "-o", "out.mmdb", "--cache", "c", "--no-cache"});
  EXPECT_EQ(both.exit_code, 2);
  // An unusable default folder is no error: the cook goes on without a cache.
  write("home_file", "a file");
  ::setenv("MMCOOK_CACHE_DIR", (folder_ / "home_file" / "cache").c_str(), 1);
  const CliRun fallback = mmcook({"cook", "loco.toml", "-o", "out.mmdb"});
  EXPECT_EQ(fallback.exit_code, 0) << fallback.err;
  EXPECT_EQ(fallback.out.find("clip cache"), std::string::npos);
}

// cook-clip for each clip, then link: the bytes of the one-piece cook. A part cooked from the
// same inputs is left alone, and the depfile names what the part depends on.
TEST_F(Cli, CookClipAndLinkMakeTheCooksBytes) {
  writeGoodClips();
  write("loco.toml", kManifest);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "whole.mmdb", "--no-cache"}).exit_code, 0);
  const CliRun first = mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "walk.mmclip",
                               "--depfile", "walk.mmclip.d"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "cooked walk.mmclip (clip 0 of 2: walk)\n");
  const CliRun second = mmcook({"cook-clip", "loco.toml", "--clip", "turning", "--first",
                                "walk.mmclip", "-o", "turning.mmclip", "-q"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out + second.err, "");
  const std::string folder = fs::canonical(folder_).string();
  EXPECT_EQ(readFile(folder_ / "walk.mmclip.d"),
            folder + "/walk.mmclip: \\\n  " + folder + "/loco.toml \\\n  " + folder +
                "/walk.bvh \\\n  " + fs::canonical(MMCOOK_PATH).string() + "\n");

  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(folder_ / "turning.mmclip", old_time);
  const CliRun again = mmcook(
      {"cook-clip", "loco.toml", "--index", "1", "--first", "walk.mmclip", "-o", "turning.mmclip"});
  EXPECT_EQ(again.out, "up to date turning.mmclip (clip 1 of 2: turning)\n");
  EXPECT_EQ(fs::last_write_time(folder_ / "turning.mmclip"), old_time);

  const CliRun link = mmcook({"link", "loco.toml", "walk.mmclip", "turning.mmclip", "-o",
                              "linked.mmdb", "--verify", "-q", "--report", "link.json"});
  ASSERT_EQ(link.exit_code, 0) << link.err;
  EXPECT_TRUE(readFile(folder_ / "whole.mmdb") == readFile(folder_ / "linked.mmdb"));
  // The link's report: its parts instead of a clip cache; the clips are the database's (the
  // mirrored copy too), the files the manifest's.
  const Json report = JsonReader(readFile(folder_ / "link.json")).document();
  EXPECT_EQ(report["command"].string(), "link");
  EXPECT_EQ(report["status"].string(), "ok");
  EXPECT_EQ(report["manifest"].string(), "loco.toml");
  EXPECT_TRUE(std::get<bool>(report["verified"].value));
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(report["clip_cache"].value));
  EXPECT_EQ(report["parts"]["files"].number(), 2);
  EXPECT_EQ(report["clips"].number(), 3);
  EXPECT_EQ(report["mirrored_clips"].number(), 1);
  // Without --first, a later clip cooks the first one itself: the same part.
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "1", "-o", "alone.mmclip"}).exit_code, 0);
  EXPECT_TRUE(readFile(folder_ / "alone.mmclip") == readFile(folder_ / "turning.mmclip"));
}

// A build edge of several clips: cook-clip with an --index, an -o and an --entry per clip makes
// the parts that one run per clip makes, with one depfile for them all, and leaves a current part
// alone.
TEST_F(Cli, CookClipMakesSeveralPartsInOneRun) {
  writeGoodClips();
  write("loco.toml", kManifest);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "whole.mmdb", "--no-cache"}).exit_code, 0);
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "walk.mmclip", "-q"}).exit_code,
            0);
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "1", "--first", "walk.mmclip", "-o",
                    "turning.mmclip", "-q"})
                .exit_code,
            0);
  ASSERT_EQ(mmcook({"cook-entries", "loco.toml", "-o", "parts"}).exit_code, 0);

  // The first clip is cooked first whatever the order given: it is the later clips' context.
  const CliRun both = mmcook({"cook-clip", "loco.toml", "--index", "1", "--entry", "parts/1.entry",
                              "-o", "parts/1.mmclip", "--index", "0", "--entry", "parts/0.entry",
                              "-o", "parts/0.mmclip", "--depfile", "parts/both.d"});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(both.out,
            "cooked parts/0.mmclip (clip 0 of 2: walk)\ncooked parts/1.mmclip (clip 1 of 2: "
            "turning)\n");
  EXPECT_TRUE(readFile(folder_ / "parts/0.mmclip") == readFile(folder_ / "walk.mmclip"));
  EXPECT_TRUE(readFile(folder_ / "parts/1.mmclip") == readFile(folder_ / "turning.mmclip"));
  // One depfile, named by the first part given: the entries instead of the manifest, and both
  // sources.
  const std::string folder = fs::canonical(folder_).string();
  EXPECT_EQ(readFile(folder_ / "parts/both.d"),
            folder + "/parts/1.mmclip: \\\n  " + folder + "/parts/1.entry \\\n  " + folder +
                "/parts/0.entry \\\n  " + folder + "/turn.bvh \\\n  " + folder +
                "/walk.bvh \\\n  " + fs::canonical(MMCOOK_PATH).string() + "\n");
  const CliRun link =
      mmcook({"link", "loco.toml", "parts/0.mmclip", "parts/1.mmclip", "-o", "linked.mmdb", "-q"});
  ASSERT_EQ(link.exit_code, 0) << link.err;
  EXPECT_TRUE(readFile(folder_ / "whole.mmdb") == readFile(folder_ / "linked.mmdb"));

  // A run after a change cooks again only the parts whose inputs changed.
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(folder_ / "parts/0.mmclip", old_time);
  fs::last_write_time(folder_ / "parts/1.mmclip", old_time);
  WalkOptions turn;
  turn.turn = 1.3;
  turn.speed = 90;
  turn.frames = 180;
  write("turn.bvh", walkBvh(turn));
  const CliRun again = mmcook({"cook-clip", "loco.toml", "--index", "0", "--index", "1", "-o",
                               "parts/0.mmclip", "-o", "parts/1.mmclip"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out,
            "up to date parts/0.mmclip (clip 0 of 2: walk)\ncooked parts/1.mmclip (clip 1 of 2: "
            "turning)\n");
  EXPECT_EQ(fs::last_write_time(folder_ / "parts/0.mmclip"), old_time);
  EXPECT_NE(fs::last_write_time(folder_ / "parts/1.mmclip"), old_time);

  // Lists that do not pair up are refused before anything is read or written.
  auto fails = [&](const std::vector<std::string>& args, const std::string& start, int code) {
    const CliRun run = mmcook(args);
    EXPECT_EQ(run.exit_code, code) << run.err;
    EXPECT_EQ(run.err.rfind(start, 0), 0u) << run.err;
  };
  fails({"cook-clip", "loco.toml", "--index", "0", "--index", "1", "-o", "x.mmclip"},
        "mmcook: error: cook-clip needs one -o per clip: 2 clips, 1 output", 2);
  fails({"cook-clip", "loco.toml", "--clip", "turning", "-o", "x.mmclip", "-o", "y.mmclip"},
        "mmcook: error: cook-clip needs one -o per clip: 1 clip, 2 outputs", 2);
  fails({"cook-clip", "loco.toml", "--index", "0", "--index", "1", "-o", "x.mmclip", "-o",
         "y.mmclip", "--entry", "parts/0.entry"},
        "mmcook: error: cook-clip needs one --entry per clip or none: 2 clips, 1 entries", 2);
  fails({"cook-clip", "loco.toml", "--index", "1", "--index", "1", "-o", "x.mmclip", "-o",
         "y.mmclip"},
        "mmcook: error: --index 1 is given twice", 2);
  fails({"cook-clip", "loco.toml", "--index", "0", "--index", "1", "-o", "x.mmclip", "-o",
         "./x.mmclip"},
        "mmcook: error: -o names the file './x.mmclip' twice", 2);
  EXPECT_FALSE(fs::exists(folder_ / "x.mmclip"));
  EXPECT_FALSE(fs::exists(folder_ / "y.mmclip"));
}

// A mirrored copy's tags swap left and right alike in a cook and in a link of its parts; a changed
// [mirror] tag_pairs links the same parts into what a cook with it gives.
TEST_F(Cli, MirroredTagsSwapAlikeInACookAndALink) {
  writeGoodClips();
  std::string manifest = kManifest;
  manifest.replace(manifest.find("[database]"), 10,
                   "[mirror]\ntag_pairs = [[\"left\", \"right\"]]\n\n[database]");
  manifest.replace(manifest.find("tags = [\"locomotion\"]\nmirror"), 21,
                   "tags = [\"locomotion\", \"strafe-left\"]");
  manifest.replace(manifest.find("tags = [\"turn\"]"), 15, "tags = [\"turn_left_90\"]");
  write("loco.toml", manifest);
  auto cookAndLink = [&](const std::string& name) {
    ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", name + ".mmdb", "-q", "--no-cache"}).exit_code, 0);
    ASSERT_EQ(
        mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "walk.mmclip", "-q"}).exit_code, 0);
    ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "1", "--first", "walk.mmclip", "-o",
                      "turning.mmclip", "-q"})
                  .exit_code,
              0);
    const CliRun link = mmcook({"link", "loco.toml", "walk.mmclip", "turning.mmclip", "-o",
                                name + "_linked.mmdb", "--verify", "-q"});
    ASSERT_EQ(link.exit_code, 0) << link.err;
    EXPECT_TRUE(readFile(folder_ / (name + ".mmdb")) == readFile(folder_ / (name + "_linked.mmdb")))
        << name;
  };
  cookAndLink("swapped");
  const mmdb::Database swapped =
      std::move(mmdb::Database::open((folder_ / "swapped.mmdb").c_str()).value());
  auto tagsOf = [](const mmdb::Database& db, const char* clip) {
    std::vector<std::string> out;
    const uint64_t mask = db.clip(static_cast<uint32_t>(db.findClip(clip))).tag_mask;
    for (uint32_t bit = 0; bit < db.tagCount(); ++bit)
      if (mask & (uint64_t{1} << bit)) out.emplace_back(db.tagName(bit));
    return out;
  };
  EXPECT_EQ(tagsOf(swapped, "walk"), (std::vector<std::string>{"locomotion", "strafe-left"}));
  EXPECT_EQ(tagsOf(swapped, "walk#mirror"),
            (std::vector<std::string>{"locomotion", "strafe-right", "mirrored"}));
  EXPECT_NE(swapped.tagMask("turn_right_90"), 0u);
  const CliRun inspect = mmcook({"inspect", "swapped.mmdb"});
  EXPECT_NE(inspect.out.find("strafe-right"), std::string::npos) << inspect.out;

  // No swapping: the parts cooked for the pairs above link into the new cook's bytes.
  manifest.replace(manifest.find("tag_pairs = [[\"left\", \"right\"]]"), 31, "tag_pairs = []");
  write("loco.toml", manifest);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "kept.mmdb", "-q", "--no-cache"}).exit_code, 0);
  ASSERT_EQ(
      mmcook({"link", "loco.toml", "walk.mmclip", "turning.mmclip", "-o", "kept_linked.mmdb", "-q"})
          .exit_code,
      0);
  EXPECT_TRUE(readFile(folder_ / "kept.mmdb") == readFile(folder_ / "kept_linked.mmdb"));
  EXPECT_FALSE(readFile(folder_ / "kept.mmdb") == readFile(folder_ / "swapped.mmdb"));
  const mmdb::Database kept =
      std::move(mmdb::Database::open((folder_ / "kept.mmdb").c_str()).value());
  EXPECT_EQ(tagsOf(kept, "walk#mirror"),
            (std::vector<std::string>{"locomotion", "strafe-left", "mirrored"}));
  EXPECT_EQ(kept.tagMask("strafe-right"), 0u);
  cookAndLink("kept");
}

// A bad pair stops the cook and the link with the manifest's line, and writes nothing.
TEST_F(Cli, ABadTagPairWritesNothing) {
  writeGoodClips();
  std::string manifest = kManifest;
  manifest.replace(manifest.find("[database]"), 10,
                   "[mirror]\ntag_pairs = [[\"left\", \"Left\"]]\n\n[database]");
  write("loco.toml", manifest);
  const std::string message =
      "loco.toml:3: error: 'mirror.tag_pairs' must be pairs of words that a mirrored copy's tags "
      "swap, "
      "e.g. [[\"left\", \"right\"]]; a pair must be two different words, got 'left' and 'Left'";
  expectCookFails({"loco.toml"}, message);
  const CliRun link =
      mmcook({"link", "loco.toml", "walk.mmclip", "turning.mmclip", "-o", "l.mmdb"});
  EXPECT_EQ(link.exit_code, 1);
  EXPECT_EQ(link.err, message + "\n");
  EXPECT_FALSE(fs::exists(folder_ / "l.mmdb"));
}

// cook-entries: a file per clip that changes only with what the clip reads of the manifest, so a
// build edge per clip can depend on it instead of the manifest; cook-clip --entry checks it and
// names it in the depfile; cook-clip --cache and link --cache reuse parts and the pose coding.
TEST_F(Cli, ClipEntriesChangeOnlyWithWhatTheirClipReads) {
  writeGoodClips();
  write("loco.toml", kManifest);
  ASSERT_EQ(mmcook({"cook-entries", "loco.toml", "-o", "parts", "--clips", "2"}).exit_code, 0);
  const std::string walk_entry = readFile(folder_ / "parts/0.entry");
  const std::string turn_entry = readFile(folder_ / "parts/1.entry");
  EXPECT_NE(walk_entry.find("source path"), std::string::npos) << walk_entry;
  EXPECT_NE(walk_entry, turn_entry);
  const auto walk_time = fs::last_write_time(folder_ / "parts/0.entry");
  std::string manifest = kManifest;
  manifest.replace(manifest.find("[database]"), 10, "[weights]\nhip_velocity = 2\n[database]");
  write("loco.toml", manifest);
  ASSERT_EQ(mmcook({"cook-entries", "loco.toml", "-o", "parts", "--clips", "2"}).exit_code, 0);
  EXPECT_EQ(readFile(folder_ / "parts/0.entry"), walk_entry);  // a weight is the link's
  EXPECT_EQ(readFile(folder_ / "parts/1.entry"), turn_entry);
  EXPECT_EQ(fs::last_write_time(folder_ / "parts/0.entry"), walk_time);
  manifest.replace(manifest.find("frames = [10, 170]"), 18, "frames = [10, 160]");
  write("loco.toml", manifest);
  ASSERT_EQ(mmcook({"cook-entries", "loco.toml", "-o", "parts", "--clips", "2"}).exit_code, 0);
  EXPECT_EQ(readFile(folder_ / "parts/0.entry"), walk_entry);
  EXPECT_NE(readFile(folder_ / "parts/1.entry"), turn_entry);
  // Another count than the build's: exit 1, and the count where the build's configure reads it.
  const CliRun recount = mmcook({"cook-entries", "loco.toml", "-o", "parts", "--clips", "3"});
  EXPECT_EQ(recount.exit_code, 1);
  EXPECT_NE(recount.err.find("the manifest now has 2 clips where the build was made for 3"),
            std::string::npos)
      << recount.err;
  EXPECT_EQ(readFile(folder_ / "parts/clips.count"), "2\n");

  const CliRun wrong = mmcook({"cook-clip", "loco.toml", "--index", "0", "--entry", "parts/1.entry",
                               "-o", "parts/0.mmclip"});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("parts/1.entry: it does not hold clip walk's entry"), std::string::npos)
      << wrong.err;
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "0", "--entry", "parts/0.entry", "-o",
                    "parts/0.mmclip", "--depfile", "parts/0.d"})
                .exit_code,
            0);
  const std::string depfile = readFile(folder_ / "parts/0.d");
  EXPECT_NE(depfile.find("parts/0.entry"), std::string::npos) << depfile;
  EXPECT_EQ(depfile.find("loco.toml"), std::string::npos) << depfile;
  const std::vector<std::string> turn_clip{
      "cook-clip", "loco.toml",     "--index", "1",          "--first", "parts/0.mmclip",
      "--entry",   "parts/1.entry", "--cache", "clip_cache", "-o",      "parts/1.mmclip"};
  ASSERT_EQ(mmcook(turn_clip).exit_code, 0);
  const std::string turn_part = readFile(folder_ / "parts/1.mmclip");
  fs::remove(folder_ / "parts/1.mmclip");
  std::vector<std::string> verbose = turn_clip;
  verbose.push_back("-v");
  const CliRun again = mmcook(verbose);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("from the clip cache"), std::string::npos) << again.err;
  EXPECT_TRUE(readFile(folder_ / "parts/1.mmclip") == turn_part);

  for (const char* name : {"one", "two"}) {
    const std::string report = std::string(name) + ".json";
    ASSERT_EQ(mmcook({"link", "loco.toml", "parts/0.mmclip", "parts/1.mmclip", "-o",
                      std::string(name) + ".mmdb", "--cache", "clip_cache", "--report", report})
                  .exit_code,
              0);
    const Json doc = JsonReader(readFile(folder_ / report)).document();
    EXPECT_EQ(doc["command"].string(), "link");
    EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(doc["clip_cache"].value));
    EXPECT_EQ(doc["parts"]["files"].number(), 2);
    // The second link finds the first one's pose coding.
    EXPECT_EQ(std::get<bool>(doc["parts"]["coded_poses_found"].value), name[0] == 't') << name;
  }
  EXPECT_TRUE(readFile(folder_ / "one.mmdb") == readFile(folder_ / "two.mmdb"));
}

TEST_F(Cli, CookClipAndLinkRefuseWhatDoesNotFit) {
  writeGoodClips();
  write("loco.toml", kManifest);
  auto fails = [&](const std::vector<std::string>& args, const std::string& start, int code = 1) {
    const CliRun run = mmcook(args);
    EXPECT_EQ(run.exit_code, code) << run.err;
    EXPECT_EQ(run.err.rfind(start, 0), 0u) << run.err;
  };
  fails({"cook-clip", "loco.toml", "--index", "2", "-o", "x.mmclip"},
        "mmcook: error: loco.toml: --index 2 is past the manifest's 2 clips (0 to 1)");
  fails({"cook-clip", "loco.toml", "--clip", "run", "-o", "x.mmclip"},
        "mmcook: error: loco.toml: no clip is named 'run'");
  fails({"cook-clip", "loco.toml", "-o", "x.mmclip"},
        "mmcook: error: cook-clip needs one of --index N (from 0) or --clip NAME", 2);
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "walk.mmclip"}).exit_code, 0);
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "1", "-o", "turning.mmclip"}).exit_code,
            0);
  fails({"link", "loco.toml", "turning.mmclip", "walk.mmclip", "-o", "out.mmdb"},
        "mmcook: error: turning.mmclip: it was not cooked from what clip walk of the manifest is "
        "now");
  fails({"link", "loco.toml", "walk.mmclip", "-o", "out.mmdb"},
        "mmcook: error: the manifest has 2 clips but 1 .mmclip files were given");
  write("notes.mmclip", "not a part");
  fails({"link", "loco.toml", "walk.mmclip", "notes.mmclip", "-o", "out.mmdb"},
        "mmcook: error: notes.mmclip: it is not an .mmclip file (no MMCL identifier)");
  fails({"cook-clip", "loco.toml", "--index", "1", "--first", "notes.mmclip", "-o", "t.mmclip"},
        "mmcook: error: notes.mmclip: it is not an .mmclip file (no MMCL identifier)");
  std::string damaged = readFile(folder_ / "turning.mmclip");
  damaged[damaged.size() / 2] ^= 0x20;
  write("damaged.mmclip", damaged);
  fails({"link", "loco.toml", "walk.mmclip", "damaged.mmclip", "-o", "out.mmdb"},
        "mmcook: error: damaged.mmclip: its checksum does not match: the file is damaged");
  // A failed link's report names the part.
  fails({"link", "loco.toml", "walk.mmclip", "damaged.mmclip", "-o", "out.mmdb", "--report",
         "link.json"},
        "mmcook: error: damaged.mmclip: its checksum does not match");
  const Json report = JsonReader(readFile(folder_ / "link.json")).document();
  EXPECT_EQ(report["command"].string(), "link");
  EXPECT_EQ(report["status"].string(), "failed");
  EXPECT_EQ(report["error"]["code"].string(), "bad-input");
  EXPECT_EQ(report["error"]["file"].string(), "damaged.mmclip");
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(report["error"]["line"].value));
  // A changed weight only re-links; a changed source makes its part stale.
  std::string manifest = kManifest;
  manifest.replace(manifest.find("[database]"), 10, "[weights]\nhip_velocity = 2\n[database]");
  write("loco.toml", manifest);
  EXPECT_EQ(mmcook({"link", "loco.toml", "walk.mmclip", "turning.mmclip", "-o", "w.mmdb", "-q"})
                .exit_code,
            0);
  // A changed source is the build's to notice (cook-clip's depfile names it): the new part links
  // into what a whole cook gives.
  write("turn.bvh", walkBvh({}));
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "1", "--first", "walk.mmclip", "-o",
                    "turning.mmclip", "-q"})
                .exit_code,
            0);
  ASSERT_EQ(mmcook({"link", "loco.toml", "walk.mmclip", "turning.mmclip", "-o", "new.mmdb", "-q"})
                .exit_code,
            0);
  ASSERT_EQ(mmcook({"cook", "loco.toml", "-o", "whole.mmdb", "-q", "--no-cache"}).exit_code, 0);
  EXPECT_TRUE(readFile(folder_ / "new.mmdb") == readFile(folder_ / "whole.mmdb"));
  // The part's folder is made when missing (a build writes no step to make it); a path through
  // a file cannot be.
  ASSERT_EQ(
      mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "parts/new/walk.mmclip"}).exit_code,
      0);
  EXPECT_TRUE(fs::is_regular_file(folder_ / "parts/new/walk.mmclip"));
  fails({"cook-clip", "loco.toml", "--index", "0", "-o", "notes.mmclip/walk.mmclip"},
        "mmcook: error: cannot write 'notes.mmclip/walk.mmclip'");
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb"));
}

// A part changed and sealed again, so that its checksums hold: the link checks what it reads as
// the runtime checks a database, and refuses a part whose values the runtime would refuse, with
// exit 1 naming the part and the value, --verify or not, and writes nothing.
TEST_F(Cli, LinkRefusesAResealedPartWhoseValuesDoNotHold) {
  writeGoodClips();
  write("loco.toml", kManifest);
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "0", "-o", "walk.mmclip"}).exit_code, 0);
  ASSERT_EQ(mmcook({"cook-clip", "loco.toml", "--index", "1", "-o", "turning.mmclip"}).exit_code,
            0);
  const std::string bytes = readFile(folder_ / "turning.mmclip");
  const mmdb::cook::ClipFile good = mmdb::cook::parseClipFile(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "turning.mmclip");
  const size_t joints = good.part.skeleton.names.size();
  auto resealed = [&](const std::string& name, auto change) {
    mmdb::cook::ClipFile file = good;
    change(file.part);
    const std::vector<uint8_t> out = mmdb::cook::serializeClipFile(file.key, file.part).whole();
    write(name, std::string(out.begin(), out.end()));
  };
  resealed("scaled.mmclip",
           [&](mmdb::cook::ClipPart& p) { p.motion.clip.rotations[3 * joints + 2] *= 2.f; });
  resealed("root.mmclip", [](mmdb::cook::ClipPart& p) { p.motion.root[7].rotation *= 0.5f; });
  resealed("bind.mmclip",
           [](mmdb::cook::ClipPart& p) { p.skeleton.bind_rotations[1] = glm::quat(0, 0, 0, 0); });
  const std::string usable = std::string("; it is not a usable .mmclip of ") +
                             mmdb::cook::kCookerVersion +
                             ": cook the clip again (mmcook cook-clip), or delete the file\n";
  const std::string joint2 = good.part.skeleton.names[2], joint1 = good.part.skeleton.names[1];
  const std::pair<std::string, std::string> cases[] = {
      {"scaled.mmclip", "scaled.mmclip (motion): the rotation of joint 2 (" + joint2 +
                            ") at frame 3 has length 2, not 1"},
      {"root.mmclip", "root.mmclip (motion): the root rotation at frame 7 has length 0.5, not 1"},
      {"bind.mmclip",
       "bind.mmclip: the bind rotation of joint 1 (" + joint1 + ") has length 0, not 1"}};
  write("out.mmdb", "previous contents");
  for (const auto& [part, message] : cases) {
    for (const bool verify : {false, true}) {
      std::vector<std::string> args{"link", "loco.toml", "walk.mmclip", part, "-o", "out.mmdb"};
      if (verify) args.push_back("--verify");
      const CliRun run = mmcook(args);
      EXPECT_EQ(run.exit_code, 1) << run.err;
      EXPECT_EQ(run.err, "mmcook: error: " + message + usable);
      EXPECT_EQ(readFile(folder_ / "out.mmdb"), "previous contents");
    }
  }
  // The untouched parts link.
  EXPECT_EQ(mmcook({"link", "loco.toml", "walk.mmclip", "turning.mmclip", "-o", "out.mmdb", "-q"})
                .exit_code,
            0);
  for (const auto& entry : fs::directory_iterator(folder_))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

TEST_F(Cli, ReportWritesOnePageOrNamesWhatIsWrong) {
  writeGoodClips();
  ASSERT_EQ(mmcook({"cook", "walk.bvh", "turn.bvh", "-o", "out.mmdb"}).exit_code, 0);
  const CliRun run = mmcook({"report", "out.mmdb", "-o", "out.html", "--compare", "out.mmdb"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_TRUE(fs::is_regular_file(folder_ / "out.html"));

  write("bad.mmdb", "not a database");
  const CliRun bad = mmcook({"report", "out.mmdb", "-o", "bad.html", "--compare", "bad.mmdb"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(
      bad.err,
      "mmcook: error: cannot report on --compare database 'bad.mmdb': NotAnMmdb: bad.mmdb: the "
      "file identifier is not \"MMDB\": this is not a motion-matching database; check the "
      "path, or re-cook the file with mmcook cook\n");
  const CliRun unwritable = mmcook({"report", "out.mmdb", "-o", "no_such_folder/out.html"});
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_EQ(unwritable.err,
            "mmcook: error: cannot write 'no_such_folder/out.html': cannot create a temporary "
            "file beside it: No such file or directory; check that the folder exists, is "
            "writable and has free space, or choose another output path with -o\n");
  EXPECT_FALSE(fs::exists(folder_ / "bad.html"));
  const CliRun usage = mmcook({"report", "out.mmdb"});
  EXPECT_EQ(usage.exit_code, 2);
  // The replay's size: checked before anything is opened, as diff checks it.
  const CliRun long_run = mmcook({"report", "out.mmdb", "-o", "long.html", "--seconds", "601"});
  EXPECT_EQ(long_run.exit_code, 2);
  EXPECT_NE(long_run.err.find("--seconds wants a number of seconds from 1 to 600, got 601"),
            std::string::npos)
      << long_run.err;
  const CliRun crowd = mmcook({"report", "out.mmdb", "-o", "crowd.html", "--characters", "0"});
  EXPECT_EQ(crowd.exit_code, 2);
  EXPECT_NE(crowd.err.find("--characters wants a whole number from 1 to 256, got 0"),
            std::string::npos)
      << crowd.err;
  EXPECT_FALSE(fs::exists(folder_ / "long.html"));
  const CliRun small =
      mmcook({"report", "out.mmdb", "-o", "small.html", "--characters", "3", "--seconds", "2"});
  ASSERT_EQ(small.exit_code, 0) << small.err;
  std::stringstream page;
  page << std::ifstream(folder_ / "small.html").rdbuf();
  EXPECT_NE(page.str().find("data-samples=\"120\""), std::string::npos);
  EXPECT_NE(page.str().find("3 characters of "), std::string::npos);
}

// The file at `path` with feature_offset[column] (or feature_scale[column]) set to `value`: a
// file the runtime opens (both finite, the scale positive) whatever their size.
std::string withFeatureValue(const fs::path& path, bool scale, uint16_t column, float value) {
  std::string bytes = readFile(path);
  mmdb::Result<mmdb::Database> opened = mmdb::Database::open(path.c_str());
  if (!opened) return bytes;
  const mmdb::fb::Database& db = *opened.value().flatbuffer();
  const auto* vector = scale ? db.feature_scale() : db.feature_offset();
  const size_t at =
      size_t(reinterpret_cast<const uint8_t*>(vector->Data()) - opened.value().bytes().data()) +
      column * sizeof(float);
  std::memcpy(&bytes[at], &value, sizeof value);
  return bytes;
}

// A file the runtime accepts, with a feature normalization far beyond any cook's (an offset of
// 1e38, a scale of 1e-45), makes no internal error of the report, alone or compared: the page
// shows each file on its own where one's features do not fit the other's normalization, and
// says why, with the file and the values.
TEST_F(Cli, ReportOfAnExtremeFeatureNormalizationIsNoInternalError) {
  writeGoodClips();
  ASSERT_EQ(mmcook({"cook", "walk.bvh", "turn.bvh", "-o", "a.mmdb", "-q"}).exit_code, 0);
  write("offset.mmdb", withFeatureValue(folder_ / "a.mmdb", false, 0, 1e38f));
  write("scale.mmdb", withFeatureValue(folder_ / "a.mmdb", true, 3, 1e-45f));
  for (const char* file : {"offset.mmdb", "scale.mmdb"})
    ASSERT_TRUE(mmdb::Database::open((folder_ / file).c_str())) << file;  // the runtime opens it
  struct Case {
    std::vector<std::string> args;
    std::string why;  // on the page
  };
  const Case cases[] = {
      {{"report", "offset.mmdb", "-o", "out.html"}, ""},
      {{"report", "a.mmdb", "-o", "out.html", "--compare", "offset.mmdb"},
       "Not on one axis: A&#39;s feature column 0 at frame 0, normalized as B normalizes it, is "
       "not a finite float (A: feature_offset[0] = 1e+38"},
      {{"report", "scale.mmdb", "-o", "out.html"}, ""},
      {{"report", "scale.mmdb", "-o", "out.html", "--compare", "a.mmdb"},
       "Not on one axis: A&#39;s feature column 3 at frame 0, normalized as B normalizes it, is "
       "not a finite float (A: feature_offset[3] = "}};
  for (const Case& c : cases) {
    fs::remove(folder_ / "out.html");
    const CliRun run = mmcook(c.args);
    EXPECT_EQ(run.exit_code, 0) << c.args[1] << " " << c.args.back() << ": " << run.err;
    const std::string page = readFile(folder_ / "out.html");
    EXPECT_NE(page.find(c.why), std::string::npos) << c.args[1] << " " << c.args.back();
  }
}

TEST_F(Cli, InspectSourceListsTakesAndJoints) {
  write("walk.bvh", walkBvh({}));
  const CliRun run = mmcook({"inspect-source", "walk.bvh"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("file        walk.bvh (BVH)\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("240 frames at 30 Hz (0..239)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("joints      12 "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("LeftToeBase"), std::string::npos) << run.out;
}

TEST_F(Cli, VersionAndHelp) {
  const CliRun version = mmcook({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, std::string(mmdb::cook::kCookerVersion) + "\n");
  const CliRun help = mmcook({"cook", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--verify"), std::string::npos) << help.out;
}

// ---------------------------------------------------------------------------------------------
// Bad usage: exit 2

TEST_F(Cli, BadUsageExitsWithTwo) {
  write("walk.bvh", walkBvh({}));
  write("loco.toml", "[[clip]]\nsource = \"walk.bvh\"\n");
  EXPECT_EQ(mmcook({}).exit_code, 2);
  EXPECT_EQ(mmcook({"bake"}).exit_code, 2);
  EXPECT_EQ(mmcook({"cook", "walk.bvh"}).exit_code, 2);  // no -o
  EXPECT_EQ(mmcook({"cook", "-o", "out.mmdb"}).exit_code, 2);
  EXPECT_EQ(mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--jobs", "two"}).exit_code, 2);
  EXPECT_EQ(mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--colour"}).exit_code, 2);
  EXPECT_EQ(mmcook({"inspect"}).exit_code, 2);
  const CliRun mixed = mmcook({"cook", "loco.toml", "walk.bvh", "-o", "out.mmdb"});
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_EQ(
      mixed.err,
      "mmcook: error: give one manifest (.toml) or motion files, not both or several manifests; "
      "list extra clips in the manifest as [[clip]] tables\nRun with --help for more "
      "information.\n");
  const CliRun both = mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "--quiet", "--verbose"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb"));
}

// ---------------------------------------------------------------------------------------------
// Bad input: exit 1 with the exact message; no output file, an existing one untouched

// The lines of walkBvh's output, to damage one of them.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
std::string joinLines(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& line : v) out += line + "\n";
  return out;
}
// 1-based line number of the first line that starts with `prefix`.
int lineOf(const std::string& text, const std::string& prefix) {
  const auto v = lines(text);
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].rfind(prefix, 0) == 0) return static_cast<int>(i + 1);
  return -1;
}

TEST_F(Cli, TruncatedBvh) {
  const std::string good = walkBvh({});
  const std::string cut = good.substr(0, good.size() - 40);  // inside the last frame
  write("cut.bvh", cut);
  const int last_line = static_cast<int>(lines(cut).size());
  const auto numbers = [&] {
    std::istringstream in(lines(cut).back());
    return static_cast<int>(std::distance(std::istream_iterator<std::string>(in),
                                          std::istream_iterator<std::string>()));
  }();
  expectCookFails({"cut.bvh"}, "cut.bvh:" + std::to_string(last_line) +
                                   ": error: the file ends inside frame 239 (" +
                                   std::to_string(numbers) +
                                   " of 39 numbers); the file is truncated: re-export it");
}

TEST_F(Cli, ChannelCountMismatch) {
  auto v = lines(walkBvh({}));
  const int line = lineOf(joinLines(v), "Frame Time:") + 3;  // frame 2
  v[static_cast<size_t>(line - 1)] += " 0";
  write("extra.bvh", joinLines(v));
  expectCookFails(
      {"extra.bvh"},
      "extra.bvh:" + std::to_string(line) +
          ": error: frame 2 has 40 numbers but the hierarchy has 39 channels; each frame "
          "must be one line with one number per channel: fix the line or re-export "
          "the file");
}

TEST_F(Cli, NotANumberInAFrame) {
  auto v = lines(walkBvh({}));
  const int line = lineOf(joinLines(v), "Frame Time:") + 1;  // frame 0
  v[static_cast<size_t>(line - 1)] = "nan" + v[static_cast<size_t>(line - 1)].substr(1);
  write("nan.bvh", joinLines(v));
  expectCookFails({"nan.bvh"},
                  "nan.bvh:" + std::to_string(line) +
                      ": error: frame 0 holds 'nan', which is not a finite number; fix the "
                      "line or re-export the file");
}

TEST_F(Cli, GiantDeclaredFrameCount) {
  std::string text = walkBvh({});
  const int line = lineOf(text, "Frames:");
  text.replace(text.find("Frames: 240"), 11, "Frames: 4000000000000");
  write("giant.bvh", text);
  expectCookFails({"giant.bvh"},
                  "giant.bvh:" + std::to_string(line) +
                      ": error: declares 4000000000000 frames but holds 240; re-export "
                      "the file or fix the 'Frames:' line");
}

// A clip's frame range past the end of its file (240 frames) names the clip, its manifest line
// and both ranges.
TEST_F(Cli, FrameRangeOutsideTheFile) {
  writeGoodClips();
  write("range.toml", "[[clip]]\nsource = \"walk.bvh\"\nframes = [200, 300]\n");
  expectCookFails({"range.toml"},
                  "range.toml:1: error: clip walk (walk.bvh): source frames [200, 300) are not "
                  "inside "
                  "the file's 240 frames; fix the clip's frame range");
}

TEST_F(Cli, ZeroFrames) {
  WalkOptions none;
  none.frames = 0;
  const std::string text = walkBvh(none);
  write("empty.bvh", text);
  expectCookFails({"empty.bvh"},
                  "empty.bvh:" + std::to_string(lineOf(text, "Frames:")) +
                      ": error: the file holds no frames (it declares 0); re-export it "
                      "with its motion");
}

TEST_F(Cli, DeepHierarchy) {
  std::string text = "HIERARCHY\nROOT J0\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n";
  for (int j = 1; j < 300; ++j)
    text += "JOINT J" + std::to_string(j) + "\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n";
  for (int j = 0; j < 300; ++j) text += "}\n";
  text += "MOTION\nFrames: 1\nFrame Time: 0.5\n" + std::string(600, ' ') + "\n";
  write("deep.bvh", text);
  expectCookFails({"deep.bvh"},
                  "deep.bvh:1026: error: joints nest deeper than 256 levels, more than "
                  "any skeleton; the file is damaged: re-export it");
}

TEST_F(Cli, DuplicateJoints) {
  WalkOptions o;
  o.extra_joint = "Spine";
  const std::string text = walkBvh(o);
  write("dup.bvh", text);
  const auto v = lines(text);
  std::vector<int> at;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == "  JOINT Spine") at.push_back(static_cast<int>(i + 1));
  ASSERT_EQ(at.size(), 2u);
  expectCookFails({"dup.bvh"}, "dup.bvh:" + std::to_string(at[1]) +
                                   ": error: duplicate joint name 'Spine' (first at line " +
                                   std::to_string(at[0]) +
                                   "); rename one of them so every joint is unique, then "
                                   "re-export");
}

TEST_F(Cli, MissingInputFile) {
  expectCookFails({"nowhere.bvh"},
                  "mmcook: error: nowhere.bvh: cannot open: No such file or directory; check "
                  "the path");
}

TEST_F(Cli, TwoInputsWithOneName) {
  fs::create_directories(folder_ / "a");
  fs::create_directories(folder_ / "b");
  write("a/walk.bvh", walkBvh({}));
  write("b/walk.bvh", walkBvh({}));
  expectCookFails({"a/walk.bvh", "b/walk.bvh"},
                  "mmcook: error: 'a/walk.bvh' and 'b/walk.bvh' would both be clip 'walk'; rename "
                  "one, or write "
                  "a manifest that names each clip");
}

TEST_F(Cli, MistypedManifestKey) {
  writeGoodClips();
  write("loco.toml",
        "[database]\nframe_rate = 60\n\n[weights]\nfoot_postion = 0.5\n"
        "[[clip]]\nsource = \"walk.bvh\"\n");
  expectCookFails({"loco.toml"},
                  "loco.toml:5: error: unknown key 'weights.foot_postion' (did you mean "
                  "'weights.foot_position'?); known keys in [weights]: foot_position, "
                  "foot_velocity, hip_velocity, trajectory_position, trajectory_direction");
}

TEST_F(Cli, ManifestSourceMissing) {
  write("loco.toml", "[[clip]]\nsource = \"walk.bvh\"\n");
  expectCookFails({"loco.toml"},
                  "loco.toml:2: error: clip source 'walk.bvh' not found (looked for "
                  "'walk.bvh'); fix the path, which is relative to the manifest's "
                  "folder");
}

TEST_F(Cli, UnwritableOutputPath) {
  writeGoodClips();
  const CliRun run = mmcook({"cook", "walk.bvh", "-o", "no_such_folder/out.mmdb"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "mmcook: error: cannot write 'no_such_folder/out.mmdb': cannot create a temporary "
            "file beside it: No such file or directory; check that the folder exists, is "
            "writable and has free space, or choose another output path with -o\n");
  EXPECT_EQ(run.out, "");
  fs::create_directories(folder_ / "out_is_a_folder");
  const CliRun folder = mmcook({"cook", "walk.bvh", "-o", "out_is_a_folder"});
  EXPECT_EQ(folder.exit_code, 1);
  EXPECT_EQ(folder.err,
            "mmcook: error: cannot write 'out_is_a_folder': it is a folder: Is a directory; "
            "check that the folder exists, is writable and has free space, or choose "
            "another output path with -o\n");
  EXPECT_TRUE(fs::is_directory(folder_ / "out_is_a_folder"));
}

TEST_F(Cli, InspectRefusesForeignAndDamagedFiles) {
  write("notes.mmdb", "these are not the bytes of a database");
  const CliRun foreign = mmcook({"inspect", "notes.mmdb"});
  EXPECT_EQ(foreign.exit_code, 1);
  EXPECT_EQ(foreign.err.rfind("mmcook: error: cannot inspect 'notes.mmdb': NotAnMmdb: ", 0), 0u)
      << foreign.err;
  EXPECT_EQ(foreign.out, "");

  const CliRun missing = mmcook({"inspect", "absent.mmdb"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("mmcook: error: cannot inspect 'absent.mmdb': IoError: ", 0), 0u)
      << missing.err;

  writeGoodClips();
  ASSERT_EQ(mmcook({"cook", "walk.bvh", "-o", "good.mmdb", "-q"}).exit_code, 0);
  const std::string bytes = readFile(folder_ / "good.mmdb");
  write("cut.mmdb", bytes.substr(0, bytes.size() / 2));
  const CliRun cut = mmcook({"inspect", "cut.mmdb", "--json"});
  EXPECT_EQ(cut.exit_code, 1);
  EXPECT_EQ(cut.err.rfind("mmcook: error: cannot inspect 'cut.mmdb': ", 0), 0u) << cut.err;
  EXPECT_EQ(cut.out, "");
}

TEST_F(Cli, MissingRoleJointListsTheJoints) {
  write("walk.bvh", walkBvh({}));
  write("loco.toml",
        "[skeleton]\npreset = \"geno\"\nleft_foot = \"LeftAnkle\"\n"
        "[[clip]]\nsource = \"walk.bvh\"\n");
  const std::string head =
      "loco.toml:4: error: clip walk (walk.bvh): role left_foot names joint 'LeftAnkle', "
      "which the skeleton does not have; set ";
  const std::string tail =
      "left_foot in the manifest to one of the skeleton's joints: Hips, Spine, Spine1, Spine2, "
      "LeftUpLeg, LeftLeg, LeftFoot, LeftToeBase, RightUpLeg, RightLeg, RightFoot, "
      "RightToeBase\n";
  const CliRun run = mmcook({"cook", "loco.toml", "-o", "out.mmdb"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.rfind(head, 0), 0u) << run.err;
  ASSERT_GE(run.err.size(), tail.size());
  EXPECT_EQ(run.err.substr(run.err.size() - tail.size()), tail);
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb"));
}

TEST_F(Cli, NoPresetFitsListsTheJoints) {
  WalkOptions o;
  o.left_foot = "LFoot";
  write("odd.bvh", walkBvh(o));
  const CliRun run = mmcook({"cook", "odd.bvh", "-o", "out.mmdb"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("no skeleton preset fits this skeleton; tried lafan1 (no LeftFoot)"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("LeftLeg, LFoot, LeftToeBase"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb"));
}

TEST_F(Cli, ClipsWithDifferentSkeletons) {
  write("walk.bvh", walkBvh({}));
  WalkOptions o;
  o.extra_joint = "Prop";
  write("prop.bvh", walkBvh(o));
  expectCookFails(
      {"walk.bvh", "prop.bvh"},
      "mmcook: error: all clips of a database must share one skeleton: clip walk (walk.bvh) has 12 "
      "joints but clip prop (prop.bvh) has 13 (first joint only one of them has: "
      "'Prop'); cook them into separate databases");
}

TEST_F(Cli, ZeroSpreadBlockNamesTheBlock) {
  WalkOptions o;
  o.still = true;
  write("still.bvh", walkBvh(o));
  expectCookFails(
      {"still.bvh"},
      "mmcook: error: feature block left_foot_position never changes over the 479 frames of the "
      "database (zero spread), so it cannot be normalized: add clips where it varies "
      "(e.g. where the character moves its feet and turns)");
}

// A database no search could start (every frame excluded or in a clip's unmatchable tail) is an
// error naming the settings that cut the frames out, before anything is written; --verify too.
TEST_F(Cli, NoMatchableFrameIsAnError) {
  writeGoodClips();
  write("excluded.toml",
        "[database]\nframe_rate = 30\n\n"
        "[[clip]]\nsource = \"walk.bvh\"\n  [[clip.range]]\n  seconds = [0, \"end\"]\n"
        "  exclude = true\n\n"
        "[[clip]]\nsource = \"turn.bvh\"\n  [[clip.range]]\n  frames = [0, \"end\"]\n"
        "  exclude = true\n");
  expectCookFails(
      {"excluded.toml", "--verify"},
      "mmcook: error: excluded.toml: no frame is matchable, so a search could never start a clip: "
      "the last 10 frames (0.3333 s) of each clip ([database] trailing_unmatchable) "
      "and exclude = true ranges (excluded.toml:6, excluded.toml:12) cover every "
      "frame of all 2 clips; lower trailing_unmatchable, remove or shorten an "
      "excluded range, or add longer clips");
  WalkOptions short_walk;
  short_walk.frames = 60;
  write("short.bvh", walkBvh(short_walk));
  write("short.toml",
        "[database]\nframe_rate = 30\ntrailing_unmatchable = 7\n\n"
        "[[clip]]\nsource = \"short.bvh\"\n");
  expectCookFails(
      {"short.toml"},
      "mmcook: error: short.toml: no frame is matchable, so a search could never start a clip: the "
      "last 210 frames (7 s) of each clip ([database] trailing_unmatchable) cover "
      "every frame of the only clip (the longest, short, has 60 frames); lower "
      "trailing_unmatchable, remove or shorten an excluded range, or add longer clips");
}

// ---------------------------------------------------------------------------------------------
// Hostile inputs and outputs

// The output may never be one of the inputs, however its path is spelled.
TEST_F(Cli, OutputThatIsAnInputIsRefused) {
  writeGoodClips();
  const std::string walk = readFile(folder_ / "walk.bvh");
  fs::create_directories(folder_ / "sub");
  fs::create_symlink("walk.bvh", folder_ / "link.bvh");
  for (const std::string output : {"walk.bvh", "sub/../walk.bvh", "./walk.bvh", "link.bvh"}) {
    const CliRun run = mmcook({"cook", "walk.bvh", "-o", output});
    EXPECT_EQ(run.exit_code, 1) << output;
    EXPECT_EQ(run.err, "mmcook: error: " + output +
                           ": the output is the input 'walk.bvh' (the same "
                           "file), which the database would overwrite; choose another output path "
                           "with -o\n");
    EXPECT_EQ(readFile(folder_ / "walk.bvh"), walk);
  }
  write("loco.toml", "[[clip]]\nsource = \"walk.bvh\"\n");
  const std::string manifest = readFile(folder_ / "loco.toml");
  const CliRun over_manifest = mmcook({"cook", "loco.toml", "-o", "loco.toml"});
  EXPECT_EQ(over_manifest.exit_code, 1);
  EXPECT_EQ(over_manifest.err,
            "mmcook: error: loco.toml: the output is the input 'loco.toml' (the same "
            "file), which the database would overwrite; choose another "
            "output path with -o\n");
  EXPECT_EQ(readFile(folder_ / "loco.toml"), manifest);
  const CliRun over_source = mmcook({"cook", "loco.toml", "-o", "sub/../walk.bvh"});
  EXPECT_EQ(over_source.exit_code, 1);
  EXPECT_NE(over_source.err.find("the output is the input '"), std::string::npos)
      << over_source.err;
  EXPECT_EQ(readFile(folder_ / "walk.bvh"), walk);
}

// cook-clip reads every clip's source it may need (the first clip's, for the context of the
// others), so none of them may be an output, though the clip being cooked is another.
TEST_F(Cli, CookClipNeverWritesOverAnotherClipsSource) {
  writeGoodClips();
  write("left.bvh", walkBvh({}));
  write("m.toml",
        "[[clip]]\nsource = \"walk.bvh\"\n[[clip]]\nsource = \"turn.bvh\"\n"
        "[[clip]]\nsource = \"left.bvh\"\n");
  const std::string walk = readFile(folder_ / "walk.bvh");
  const std::string left = readFile(folder_ / "left.bvh");
  const CliRun context = mmcook({"cook-clip", "m.toml", "--index", "1", "-o", "walk.bvh"});
  EXPECT_EQ(context.exit_code, 1);
  EXPECT_EQ(
      context.err,
      "mmcook: error: walk.bvh: the output is the input 'walk.bvh' (the same file), which the "
      "database would overwrite; choose another output "
      "path with -o\n");
  EXPECT_EQ(readFile(folder_ / "walk.bvh"), walk);
  ASSERT_EQ(mmcook({"cook-clip", "m.toml", "--index", "0", "-o", "p0.mmclip"}).exit_code, 0);
  const CliRun other =
      mmcook({"cook-clip", "m.toml", "--index", "1", "--first", "p0.mmclip", "-o", "left.bvh"});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("left.bvh: the output is the input '"), std::string::npos) << other.err;
  EXPECT_EQ(readFile(folder_ / "left.bvh"), left);
  // The depfile too, and an entry file: read, so never written over.
  const CliRun depfile = mmcook({"cook-clip", "m.toml", "--index", "1", "--first", "p0.mmclip",
                                 "-o", "p1.mmclip", "--depfile", "left.bvh"});
  EXPECT_EQ(depfile.exit_code, 1);
  EXPECT_NE(depfile.err.find("choose another output path with --depfile"), std::string::npos)
      << depfile.err;
  EXPECT_EQ(readFile(folder_ / "left.bvh"), left);
  EXPECT_FALSE(fs::exists(folder_ / "p1.mmclip"));
  // An empty output path is refused before anything is cooked.
  const CliRun empty = mmcook({"cook-clip", "m.toml", "--index", "0", "-o", ""});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(
      empty.err.rfind("mmcook: error: -o names an empty path; give each clip's part a file\n", 0),
      0u)
      << empty.err;
}

// A manifest that fails its checks still names its sources: a failed cook's report is never
// written over one of them, and where the manifest does not even parse, it replaces only a
// file that holds a cook report.
TEST_F(Cli, AFailedCooksReportNeverWritesOverASource) {
  writeGoodClips();
  write("m.toml",
        "[[clip]]\nsource = \"turn.bvh\"\n[[clip]]\nsource = \"walk.bvh\"\n"
        "[[clip]]\nsource = \"missing.bvh\"\n");
  const std::string walk = readFile(folder_ / "walk.bvh");
  const CliRun run = mmcook({"cook", "m.toml", "-o", "x.mmdb", "--report", "walk.bvh"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "mmcook: error: walk.bvh: the output is the input 'walk.bvh' (the same file), which "
            "--report's "
            "file would overwrite; choose another "
            "output path with --report\n");
  EXPECT_EQ(readFile(folder_ / "walk.bvh"), walk);
  EXPECT_FALSE(fs::exists(folder_ / "x.mmdb"));
  // A manifest that is not TOML: its sources are unknown, so only a report is replaced.
  write("bad.toml", "[[clip]]\nsource = \"walk.bvh\"\n[[clip\n");
  write("notes.txt", "mine\n");
  const CliRun unknown = mmcook({"cook", "bad.toml", "-o", "x.mmdb", "--report", "notes.txt"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("notes.txt: not written with the failure"), std::string::npos)
      << unknown.err;
  EXPECT_EQ(readFile(folder_ / "notes.txt"), "mine\n");
  const CliRun fresh = mmcook({"cook", "bad.toml", "-o", "x.mmdb", "--report", "r.json"});
  EXPECT_EQ(fresh.exit_code, 1);
  EXPECT_EQ(JsonReader(readFile(folder_ / "r.json")).document()["status"].string(), "failed");
  const CliRun again = mmcook({"cook", "bad.toml", "-o", "x.mmdb", "--report", "r.json"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_EQ(JsonReader(readFile(folder_ / "r.json")).document()["status"].string(), "failed");
  EXPECT_EQ(again.err.find("not written"), std::string::npos) << again.err;
}

// A FIFO (or a device) given as the output stays what it is.
TEST_F(Cli, OutputThatIsNotARegularFileIsRefused) {
  writeGoodClips();
  ASSERT_EQ(::mkfifo((folder_ / "pipe.mmdb").c_str(), 0600), 0);
  const CliRun run = mmcook({"cook", "walk.bvh", "-o", "pipe.mmdb"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "mmcook: error: pipe.mmdb: cannot write the database there: not a regular file (a "
            "named pipe, FIFO), which the output would replace; choose a regular file "
            "with -o\n");
  EXPECT_TRUE(fs::is_fifo(folder_ / "pipe.mmdb"));
}

// Named pipes, devices and symbolic-link loops are named as what they are, and never block.
TEST_F(Cli, PipesDevicesAndLinkLoopsAreRefusedAtOnce) {
  ASSERT_EQ(::mkfifo((folder_ / "pipe.bvh").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((folder_ / "pipe.mmdb").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((folder_ / "pipe.toml").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((folder_ / "pipe.fbx").c_str(), 0600), 0);
  const std::string fifo = "not a regular file (a named pipe, FIFO)";
  const CliRun source = mmcook({"inspect-source", "pipe.bvh"});
  EXPECT_EQ(source.exit_code, 1);
  EXPECT_EQ(source.err, "mmcook: error: pipe.bvh: cannot open: " + fifo + "; check the path\n");
  const CliRun fbx = mmcook({"inspect-source", "pipe.fbx"});
  EXPECT_EQ(fbx.exit_code, 1);
  EXPECT_EQ(fbx.err,
            "mmcook: error: pipe.fbx: cannot open: " + fifo + "; give the path of a motion file\n");
  const CliRun zero = mmcook({"inspect-source", "/dev/zero"});
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_EQ(zero.err,
            "mmcook: error: /dev/zero: cannot open: not a regular file (a device); give the "
            "path of a motion file\n");
  const CliRun database = mmcook({"inspect", "pipe.mmdb"});
  EXPECT_EQ(database.exit_code, 1);
  EXPECT_NE(database.err.find("not a regular file"), std::string::npos) << database.err;
  const CliRun manifest = mmcook({"cook", "pipe.toml", "-o", "out.mmdb"});
  EXPECT_EQ(manifest.exit_code, 1);
  EXPECT_EQ(manifest.err, "mmcook: error: pipe.toml: cannot open: " + fifo + "; check the path\n");
  const CliRun quick = mmcook({"cook", "pipe.bvh", "-o", "out.mmdb"});
  EXPECT_EQ(quick.exit_code, 1);
  EXPECT_EQ(quick.err, "mmcook: error: pipe.bvh: cannot open: " + fifo + "; check the path\n");

  fs::create_symlink("loop_b.bvh", folder_ / "loop_a.bvh");
  fs::create_symlink("loop_a.bvh", folder_ / "loop_b.bvh");
  const CliRun loop = mmcook({"inspect-source", "loop_a.bvh"});
  EXPECT_EQ(loop.exit_code, 1);
  EXPECT_EQ(loop.err,
            "mmcook: error: loop_a.bvh: cannot open: a loop of symbolic links (too many levels "
            "of symbolic links); check the path\n");
  fs::create_directories(folder_ / "dir.toml");
  const CliRun folder = mmcook({"cook", "dir.toml", "-o", "out.mmdb"});
  EXPECT_EQ(folder.exit_code, 1);
  EXPECT_EQ(folder.err,
            "mmcook: error: dir.toml: cannot open: not a regular file (a folder); check the "
            "path\n");
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb"));
}

// A database the runtime would refuse (over 2 GiB) is refused before it is cooked: a 1 Hz walk
// of 3,000 s cooked at 1000 Hz would make 3 million frames of 12 joints.
TEST_F(Cli, DatabaseOverTwoGibibytesIsRefusedBeforeTheCook) {
  WalkOptions slow;
  slow.frames = 3000;
  std::string bvh = walkBvh(slow);
  const std::string rate = "Frame Time: 0.0333333";
  bvh.replace(bvh.find(rate), rate.size(), "Frame Time: 1");
  write("long.bvh", bvh);
  write("loco.toml", "[database]\nframe_rate = 1000\n[[clip]]\nsource = \"long.bvh\"\n");
  const CliRun run = mmcook({"cook", "loco.toml", "-o", "big.mmdb"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("with this clip the database would be about 2"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("over the 2147483646 bytes (2 GiB) an .mmdb file may hold; split the "
                         "clips into several databases"),
            std::string::npos)
      << run.err;
  EXPECT_FALSE(fs::exists(folder_ / "big.mmdb"));
}

// A cook killed while writing leaves no temporary file; one left by a killed cook on this
// machine (a process that no longer runs) is removed by the next cook beside it. In a folder that
// several machines share, another machine's temporary is kept, even when a process of that
// number is gone here, and so is one without a host in its name.
TEST_F(Cli, NoTemporaryFilesAreLeftBehind) {
  writeGoodClips();
  ::setenv("MMCOOK_HOST_NAME", "build-a", 1);
  write("out.mmdb.tmp.build-a.999999999.0", "left by a cook on this machine that was killed");
  write("out.mmdb.tmp.build-a.1.0", "process 1 still runs: kept");
  write("out.mmdb.tmp.build-b.999999999.0", "another machine's: kept");
  write("out.mmdb.tmp.999999999.0", "no host: kept");
  write("out.mmdb.tmp.build-a.999999999.0.x", "not a temporary's name: kept");
  ASSERT_EQ(mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "-q"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb.tmp.build-a.999999999.0"));
  EXPECT_TRUE(fs::exists(folder_ / "out.mmdb.tmp.build-a.1.0"));
  EXPECT_TRUE(fs::exists(folder_ / "out.mmdb.tmp.build-b.999999999.0"));
  EXPECT_TRUE(fs::exists(folder_ / "out.mmdb.tmp.999999999.0"));
  EXPECT_TRUE(fs::exists(folder_ / "out.mmdb.tmp.build-a.999999999.0.x"));

  // The other machine's next cook removes its own.
  ::setenv("MMCOOK_HOST_NAME", "build-b", 1);
  ASSERT_EQ(mmcook({"cook", "walk.bvh", "-o", "out.mmdb", "-q"}).exit_code, 0);
  ::unsetenv("MMCOOK_HOST_NAME");
  EXPECT_FALSE(fs::exists(folder_ / "out.mmdb.tmp.build-b.999999999.0"));
  EXPECT_TRUE(fs::exists(folder_ / "out.mmdb.tmp.build-a.1.0"));
  for (const char* kept : {"out.mmdb.tmp.build-a.1.0", "out.mmdb.tmp.999999999.0",
                           "out.mmdb.tmp.build-a.999999999.0.x"})
    fs::remove(folder_ / kept);
  for (const auto& entry : fs::directory_iterator(folder_))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

// ---------------------------------------------------------------------------------------------
// mmcook diff

// Two clips (walk and turn) cooked by a manifest with these weights.
std::string weightedManifest(double trajectory_direction,
                             const std::string& turn_name = "turning") {
  std::ostringstream m;
  m << "[skeleton]\npreset = \"geno\"\n\n[weights]\ntrajectory_direction = " << trajectory_direction
    << "\n\n[[clip]]\nsource = \"walk.bvh\"\ntags = [\"locomotion\"]\n\n"
    << "[[clip]]\nsource = \"turn.bvh\"\nname = \"" << turn_name << "\"\n";
  return m.str();
}

std::string format(const char* fmt, auto... args) {
  char buffer[1024];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

// The motion measures of `mmcook diff`, as --fail-on spells them, in the order it prints them
// (docs/review.md "Data checks"); the JSON spells them with '_'.
const std::vector<std::string> kMotionKeys{"foot-slide-p50",
                                           "foot-slide-p90",
                                           "foot-slide-max",
                                           "phase-drift-p50",
                                           "phase-drift-p90",
                                           "phase-drift-max",
                                           "phase-drift-share",
                                           "pose-step-ratio",
                                           "pose-step-ratio-at-switch",
                                           "pose-step-ratio-elsewhere",
                                           "pose-step-max",
                                           "pose-step-max-at-switch",
                                           "pose-step-max-elsewhere",
                                           "acceleration-max",
                                           "acceleration-max-at-switch",
                                           "acceleration-max-elsewhere",
                                           "switch-rate",
                                           "switch-rate-range-end",
                                           "switch-rate-stick-changed",
                                           "switch-rate-periodic",
                                           "continuation-rate",
                                           "hold-rate",
                                           "trajectory-error-mean",
                                           "trajectory-error-p95",
                                           "controller-distance-p50",
                                           "controller-distance-p95",
                                           "controller-distance-max",
                                           "adjustment-rate",
                                           "adjustment-turn-rate",
                                           "response-p50",
                                           "response-p90",
                                           "response-max",
                                           "responses-missed"};

class CliDiff : public Cli {
 protected:
  // Cooks `manifest` into `output`; the test fails if it does not cook.
  void cook(const std::string& manifest, const std::string& output) {
    const std::string name = output + ".toml";
    write(name, manifest);
    const CliRun run = mmcook({"cook", name, "-o", output, "--quiet", "--no-cache"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  CliRun diff(std::vector<std::string> args) {
    args.insert(args.begin(), "diff");
    args.insert(args.end(), {"--characters", "4", "--seconds", "6"});
    return mmcook(args);
  }
  static Json parsed(const std::string& text) {
    try {
      return JsonReader(text).document();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not JSON (" << e.what() << "):\n" << text;
      return Json{};
    }
  }
};

TEST_F(CliDiff, IdenticalCooksReportNoChangeEvenWithFailOnChange) {
  writeGoodClips();
  cook(weightedManifest(1.5), "a.mmdb");
  cook(weightedManifest(1.5), "b.mmdb");
  const CliRun run = diff({"a.mmdb", "b.mmdb", "--fail-on-change"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_NE(run.out.find("structure: no change\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("replay: 4 characters, 6 s at 60 Hz, stick script built-in (30 s, "
                         "looping)\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  decisions: the same in both"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nresult: no change\n"), std::string::npos) << run.out;
  // A file against itself, too.
  EXPECT_EQ(diff({"a.mmdb", "a.mmdb", "--fail-on-change"}).exit_code, 0);
}

// A file whose coded poses are damaged opens (poses decode when they play), so diff and inspect
// decode them all: a segment that does not decode is bad input (exit 1) naming the file, the
// stream, joint and frames and the clip, never "no change". And a file that alone cannot be
// replayed differs from one that can, in the text and the JSON.
TEST_F(CliDiff, AFileThatCannotBePlayedIsNeverNoChange) {
  writeGoodClips();
  cook(weightedManifest(1.5), "a.mmdb");
  std::string bytes = readFile(folder_ / "a.mmdb");
  std::string expected;
  {
    mmdb::Result<mmdb::Database> opened = mmdb::Database::open((folder_ / "a.mmdb").c_str());
    ASSERT_TRUE(opened) << opened.error().message();
    const mmdb::fb::Database& db = *opened.value().flatbuffer();
    const mmdb::fb::CodedStream* rotations = db.pose_coding()->rotations();
    const uint32_t segment_frames = db.pose_coding()->segment_frames();
    const uint32_t segments = (db.frame_count() + segment_frames - 1) / segment_frames;
    uint32_t joint = 0;  // the first joint whose rotations are coded, not constant
    while (rotations->tracks()->Get(joint)->coding() == mmdb::fb::TrackCoding::Constant) ++joint;
    const size_t at = size_t(rotations->data()->Data() - opened.value().bytes().data()) +
                      rotations->segment_offsets()->Get(joint * segments);
    bytes[at] = 0;  // the segment's header byte
    expected = format(
        "its poses do not decode: Corrupt: in clip 'walk': local_rotations: joint %u, global "
        "frames [0, %u) do not decode (damaged data): re-cook or re-copy the file\n",
        joint, std::min(segment_frames, db.frame_count()));
  }
  write("b.mmdb", bytes);
  ASSERT_TRUE(mmdb::Database::open((folder_ / "b.mmdb").c_str()));  // it opens
  for (const char* json : {"--fail-on-change", "--json"}) {
    const CliRun run = diff({"a.mmdb", "b.mmdb", "--fail-on-change", json});
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_EQ(run.err, "mmcook: error: cannot diff: B 'b.mmdb' cannot be played: " + expected);
    EXPECT_EQ(run.out, "");
  }
  const CliRun inspect = mmcook({"inspect", "b.mmdb"});
  EXPECT_EQ(inspect.exit_code, 1);
  EXPECT_EQ(inspect.err, "mmcook: error: cannot inspect 'b.mmdb': " + expected);
  EXPECT_EQ(inspect.out, "");
  EXPECT_EQ(mmcook({"inspect", "a.mmdb"}).exit_code, 0);

  // B with no matchable range (an older cook could write one): it opens and decodes, but cannot
  // be replayed, and A can: they differ, and the text and the JSON say why.
  bytes = readFile(folder_ / "a.mmdb");
  {
    mmdb::Result<mmdb::Database> opened = mmdb::Database::open((folder_ / "a.mmdb").c_str());
    ASSERT_TRUE(opened);
    ASSERT_EQ(opened.value().flatbuffer()->range_biases(), nullptr);
    const auto* ranges = opened.value().flatbuffer()->ranges();
    const size_t length_at =
        size_t(reinterpret_cast<const uint8_t*>(ranges) - opened.value().bytes().data());
    std::memset(&bytes[length_at], 0, 4);  // the vector's length
  }
  write("b.mmdb", bytes);
  const CliRun run = diff({"a.mmdb", "b.mmdb", "--fail-on-change"});
  EXPECT_EQ(run.exit_code, 4) << run.err;
  EXPECT_NE(run.out.find("  skipped: B (b.mmdb) cannot be replayed: NoMatch: the database has no "
                         "matchable frame to play"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("\nresult: differ (structure and B cannot be replayed and A can)\n"),
            std::string::npos)
      << run.out;
  const CliRun json = diff({"a.mmdb", "b.mmdb", "--json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const Json doc = parsed(json.out);
  EXPECT_TRUE(std::get<bool>(doc["differ"].value));
  EXPECT_EQ(doc["replay"]["unreplayable"].string(), "B");
  // Two files that cannot be replayed do not differ by it.
  const CliRun both = diff({"b.mmdb", "b.mmdb", "--fail-on-change", "--json"});
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_TRUE(
      std::holds_alternative<std::nullptr_t>(parsed(both.out)["replay"]["unreplayable"].value));
}

TEST_F(CliDiff, AWeightChangeShowsInSettingsAndInTheReplay) {
  writeGoodClips();
  cook(weightedManifest(1.5), "a.mmdb");
  cook(weightedManifest(0.05), "b.mmdb");
  const CliRun run = diff({"a.mmdb", "b.mmdb"});
  ASSERT_EQ(run.exit_code, 0) << run.err;  // a change is not a failure without --fail-on-change
  EXPECT_NE(run.out.find("structure: 1 change\n  settings (A -> B)\n"
                         "    weight.trajectory_direction          1.5 -> 0.05\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  decisions: differ for "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("      A: "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("trajectory_direction "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("'s pick scored here: cost "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nresult: differ (structure and decisions)\n"), std::string::npos)
      << run.out;
  const CliRun failing = diff({"a.mmdb", "b.mmdb", "--fail-on-change"});
  EXPECT_EQ(failing.exit_code, 4) << failing.err;
  EXPECT_NE(failing.out.find("\nresult: differ (structure and decisions)\n"), std::string::npos);
}

TEST_F(CliDiff, AddedAndRemovedClipsAndTheirUsage) {
  writeGoodClips();
  cook(weightedManifest(1.5, "turning"), "a.mmdb");
  cook(weightedManifest(1.5, "turn_right"), "b.mmdb");
  const CliRun run = diff({"a.mmdb", "b.mmdb", "--fail-on-change"});
  EXPECT_EQ(run.exit_code, 4) << run.err;
  EXPECT_NE(run.out.find("  clips: 2 -> 2\n    added    turn_right\n    removed  turning\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("(none)"), std::string::npos) << run.out;  // usage of the one-sided clips
  EXPECT_NE(run.out.find("\nresult: differ (structure"), std::string::npos) << run.out;
  const Json doc = parsed(diff({"a.mmdb", "b.mmdb", "--json"}).out);
  EXPECT_EQ(doc["structure"]["clips"]["added"][0].string(), "turn_right");
  EXPECT_EQ(doc["structure"]["clips"]["removed"][0].string(), "turning");
}

TEST_F(CliDiff, AChangedSourceIsAChangedClip) {
  writeGoodClips();
  cook(weightedManifest(1.5), "a.mmdb");
  WalkOptions longer;
  longer.frames = 300;
  write("walk.bvh", walkBvh(longer));
  cook(weightedManifest(1.5), "b.mmdb");
  const CliRun run = diff({"a.mmdb", "b.mmdb"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("    changed  walk: source content hash "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("; source frames 0..239 -> 0..299; frames 479 -> 599\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("    walk\n      A: 0..458 [locomotion]\n      B: 0..578 [locomotion]\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  matchable ranges (clip-local frames): "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  feature blocks (std in raw units, A -> B)\n"), std::string::npos)
      << run.out;
}

TEST_F(CliDiff, DifferentJointCountsCompareTheStructureOnly) {
  writeGoodClips();
  cook(weightedManifest(1.5), "a.mmdb");
  WalkOptions tail;
  tail.extra_joint = "Tail";
  write("walk.bvh", walkBvh(tail));
  WalkOptions turn;
  turn.turn = 1.2;
  turn.frames = 180;
  turn.extra_joint = "Tail";
  write("turn.bvh", walkBvh(turn));
  cook(weightedManifest(1.5), "b.mmdb");
  const CliRun run = diff({"a.mmdb", "b.mmdb"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("    joint_count                          12 -> 13\n"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  skipped: A has 12 joints and B has 13: they animate different "
                         "skeletons, so their decisions cannot be compared; the structure above "
                         "is the whole comparison\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("    joint 12: Tail only in B\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nresult: differ (structure)\n"), std::string::npos) << run.out;
  EXPECT_EQ(diff({"a.mmdb", "b.mmdb", "--fail-on-change"}).exit_code, 4);
  const Json doc = parsed(diff({"a.mmdb", "b.mmdb", "--json"}).out);
  EXPECT_EQ(doc["replay"]["skipped"].string().substr(0, 31), "A has 12 joints and B has 13: t");
  // No replay, nothing to check against: bad input, after the comparison.
  const CliRun checked = diff({"a.mmdb", "b.mmdb", "--fail-on", "switch-rate=3"});
  EXPECT_EQ(checked.exit_code, 1);
  EXPECT_EQ(checked.out, run.out);
  EXPECT_EQ(
      checked.err,
      "mmcook: error: --fail-on: B's replay did not run, so there is nothing to check: A has 12 "
      "joints and B has 13: they animate different skeletons, so their decisions cannot "
      "be compared; the structure above is the whole comparison\n");
}

// --fail-on: thresholds on B's motion measures. Within them it exits with 0 and prints what it
// prints without them; over one it prints each threshold exceeded, with B's value, and exits
// with 4.
// The text of `mmcook diff` but for the one line that measures this machine.
std::string withoutSearchSpeed(const std::string& text) {
  const size_t at = text.find("  decisions/s (this machine)");
  return at == std::string::npos ? text : text.substr(0, at) + text.substr(text.find('\n', at) + 1);
}

// The sample's walk_turn.bvh (motion capture: its toes plant), cooked with two direction
// weights.
TEST_F(CliDiff, FailOnExitsWith4OverAThresholdAnd0Within) {
  const std::string source = std::string(MMDB_TEST_DATA) + "/../../samples/data/walk_turn.bvh";
  for (const auto& [name, weight] : {std::pair<std::string, double>{"a", 1.5}, {"b", 0.05}})
    cook("[weights]\ntrajectory_direction = " + std::to_string(weight) +
             "\n\n[[clip]]\nsource = " + mmdb::cook::JsonWriter::escape(source) + "\n",
         name + ".mmdb");
  const CliRun plain = diff({"a.mmdb", "b.mmdb"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const Json doc = parsed(diff({"a.mmdb", "b.mmdb", "--json"}).out);
  const Json& b = doc["replay"]["b"]["motion"];
  for (const char* key : {"foot_slide_max", "phase_drift_share", "switch_rate",
                          "trajectory_error_mean", "pose_step_ratio"})
    ASSERT_GT(b[key].number(), 0) << key;
  // Each measure with its change, (B - A) / |A|, the rule stated once under the header.
  const std::string rule = "  (change = (B - A) / |A|; where A is 0, \"new\" and B - A)\n";
  EXPECT_NE(plain.out.find(rule), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find(rule, plain.out.find(rule) + 1), std::string::npos);
  for (const char* key : {"foot_slide_max", "phase_drift_p90", "switch_rate"}) {
    const double va = doc["replay"]["a"]["motion"][key].number(), vb = b[key].number();
    std::string name = key;
    std::replace(name.begin(), name.end(), '_', '-');
    const size_t line = plain.out.find("    " + name + " ");
    ASSERT_NE(line, std::string::npos) << name;
    const std::string text = plain.out.substr(line, plain.out.find('\n', line) - line);
    const std::string change = va != 0    ? format("%+.1f%%", 100.0 * (vb - va) / std::fabs(va))
                               : vb == va ? std::string("0")
                                          : format("new (%+.4g)", vb - va);
    EXPECT_EQ(text.substr(text.size() - change.size()), change) << text;
  }
  const Json& sliding = doc["replay"]["b"]["clips_sliding"];
  ASSERT_EQ(sliding.size(), 1u);
  EXPECT_EQ(sliding[0]["name"].string(), "walk_turn");
  // Each phase once: the clip's own, or across a switch.
  EXPECT_EQ(sliding[0]["phases"].number() + sliding[0]["across_phases"].number(),
            doc["replay"]["b"]["motion_detail"]["contact_phases"].number());
  EXPECT_EQ(sliding[0]["across_phases"].number(),
            doc["replay"]["b"]["motion_detail"]["phases_across_switch"].number());

  CliRun run = diff({"a.mmdb", "b.mmdb", "--fail-on",
                     "switch-rate=1000,foot-slide-p90=10m,response-p90=60s,"
                     "phase-drift-share=100%,pose-step-ratio=1e6, responses-missed = 1000"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(withoutSearchSpeed(run.out), withoutSearchSpeed(plain.out));
  // A threshold equal to the value is not exceeded.
  run = diff({"a.mmdb", "b.mmdb", "--fail-on",
              "hold-rate=1e9,responses-missed=" + format("%.0f", b["responses_missed"].number())});
  EXPECT_EQ(run.exit_code, 0) << run.err;

  // Over: each threshold exceeded, in the order given, with the value in the key's unit.
  const double error = b["trajectory_error_mean"].number();
  const std::string below = format("%.6gcm", 100 * error * 0.99);
  const std::string above = format("%.6gcm", 100 * error * 1.01);
  run = diff({"a.mmdb", "b.mmdb", "--fail-on",
              "foot-slide-max=0m,switch-rate=1000,trajectory-error-mean=" + below +
                  ",phase-drift-share=0,pose-step-ratio=0.5"});
  EXPECT_EQ(run.exit_code, 4);
  EXPECT_EQ(withoutSearchSpeed(run.out), withoutSearchSpeed(plain.out));
  EXPECT_EQ(run.err,
            format("mmcook diff: --fail-on foot-slide-max=0m: B's foot-slide-max is %.4g mm, "
                   "over 0 mm\n",
                   b["foot_slide_max"].number()) +
                format("mmcook diff: --fail-on trajectory-error-mean=%s: B's "
                       "trajectory-error-mean is %.4g m, over %g m\n",
                       below.c_str(), error, std::strtod(below.c_str(), nullptr) * 0.01) +
                format("mmcook diff: --fail-on phase-drift-share=0: B's phase-drift-share is "
                       "%.4g%%, over 0%%\n",
                       b["phase_drift_share"].number()) +
                format("mmcook diff: --fail-on pose-step-ratio=0.5: B's pose-step-ratio is %.4g, "
                       "over 0.5\n",
                       b["pose_step_ratio"].number()));
  run = diff({"a.mmdb", "b.mmdb", "--fail-on", "trajectory-error-mean=" + above});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // B's measures, not A's: B against A passes where A is over.
  const double a_rate = doc["replay"]["a"]["motion"]["switch_rate"].number();
  const double b_rate = b["switch_rate"].number();
  if (a_rate != b_rate) {
    const std::string between = format("%.9g", (a_rate + b_rate) / 2);
    EXPECT_EQ(diff({"a.mmdb", "b.mmdb", "--fail-on", "switch-rate=" + between}).exit_code,
              b_rate > a_rate ? 4 : 0);
    EXPECT_EQ(diff({"b.mmdb", "a.mmdb", "--fail-on", "switch-rate=" + between}).exit_code,
              a_rate > b_rate ? 4 : 0);
  }
  // With --json: the JSON on stdout, the thresholds on stderr.
  run = diff({"a.mmdb", "b.mmdb", "--json", "--fail-on", "switch-rate=0"});
  EXPECT_EQ(run.exit_code, 4);
  EXPECT_EQ(parsed(run.out)["replay"]["b"]["motion"]["switch_rate"].number(), b_rate);
  EXPECT_EQ(run.err, format("mmcook diff: --fail-on switch-rate=0: B's switch-rate is %.4g per "
                            "character-second, over 0 per character-second\n",
                            b_rate));
}

// Every --fail-on that does not parse is bad usage, named, before any file is opened (the files
// here do not exist).
TEST_F(CliDiff, FailOnThatDoesNotParseIsBadUsageBeforeAnythingRuns) {
  std::string keys;
  for (const std::string& key : kMotionKeys) keys += (keys.empty() ? "" : ", ") + key;
  const std::string form = "write KEY=VALUE[,KEY=VALUE...], e.g. foot-slide-p90=5mm,switch-rate=3";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"foot-slid-p90=5mm",
       "'foot-slid-p90=5mm': unknown measure 'foot-slid-p90' (did you mean 'foot-slide-p90'?); "
       "the measures: " +
           keys},
      {"foot_slide_p90=5mm",
       "'foot_slide_p90=5mm': unknown measure 'foot_slide_p90' (did you mean "
       "'foot-slide-p90'?); the measures: " +
           keys},
      {"switch-rate=3,swich-rate-periodic=1",
       "'swich-rate-periodic=1': unknown measure 'swich-rate-periodic' (did you mean "
       "'switch-rate-periodic'?); the measures: " +
           keys},
      {"smoothness=1", "'smoothness=1': unknown measure 'smoothness'; the measures: " + keys},
      {"switch-rate=-1",
       "'switch-rate=-1': the value must be a finite number >= 0; switch-rate takes a plain "
       "number, per character-second"},
      {"switch-rate=nan",
       "'switch-rate=nan': the value must be a finite number >= 0; switch-rate takes a plain "
       "number, per character-second"},
      {"foot-slide-p90=inf",
       "'foot-slide-p90=inf': the value must be a finite number >= 0; foot-slide-p90 takes a "
       "number in mm, or with mm, cm or m after it"},
      {"foot-slide-p90=1e999",
       "'foot-slide-p90=1e999': the value must be a finite number >= 0; foot-slide-p90 takes a "
       "number in mm, or with mm, cm or m after it"},
      {"response-p90=soon",
       "'response-p90=soon': the value must be a finite number >= 0; response-p90 takes a "
       "number in s, or with s or ms after it"},
      {"foot-slide-p90=5s",
       "'foot-slide-p90=5s': 's' is not a unit of foot-slide-p90, which takes a number in mm, "
       "or with mm, cm or m after it"},
      {"response-p90=5mm",
       "'response-p90=5mm': 'mm' is not a unit of response-p90, which takes a number in s, or "
       "with s or ms after it"},
      {"trajectory-error-p95=1ft",
       "'trajectory-error-p95=1ft': 'ft' is not a unit of trajectory-error-p95, which takes a "
       "number in m, or with m, cm or mm after it"},
      {"phase-drift-share=0.1m",
       "'phase-drift-share=0.1m': 'm' is not a unit of phase-drift-share, which takes a "
       "percentage, with or without %"},
      {"switch-rate=3mm",
       "'switch-rate=3mm': 'mm' is not a unit of switch-rate, which takes a plain number, per "
       "character-second"},
      {"acceleration-max=10g",
       "'acceleration-max=10g': 'g' is not a unit of acceleration-max, which takes a plain "
       "number, in m/s^2"},
      {"pose-step-ratio=2x",
       "'pose-step-ratio=2x': 'x' is not a unit of pose-step-ratio, which takes a plain number "
       "(a ratio)"},
      {"responses-missed=1%",
       "'responses-missed=1%': '%' is not a unit of responses-missed, which takes a plain "
       "number (a count)"},
      {"switch-rate", "'switch-rate' is not KEY=VALUE; " + form},
      {"switch-rate=", "'switch-rate=' is not KEY=VALUE; " + form},
      {"=3", "'=3' is not KEY=VALUE; " + form},
      {"switch-rate=3,", "an empty entry in 'switch-rate=3,'; " + form},
      {"switch-rate=3,,hold-rate=1", "an empty entry in 'switch-rate=3,,hold-rate=1'; " + form},
      {"", "no threshold given; " + form},
      {"switch-rate=3,switch-rate=4", "'switch-rate=4': switch-rate is given twice"},
  };
  for (const auto& [value, message] : cases) {
    const CliRun run = mmcook({"diff", "missing_a.mmdb", "missing_b.mmdb", "--fail-on", value});
    EXPECT_EQ(run.exit_code, 2) << value;
    EXPECT_EQ(run.out, "") << value;
    EXPECT_EQ(run.err,
              "mmcook: error: --fail-on: " + message + "\nRun with --help for more information.\n");
  }
  // Given as --fail-on=VALUE, the same.
  const CliRun run = mmcook({"diff", "missing_a.mmdb", "missing_b.mmdb", "--fail-on=switch-rate"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mmcook: error: --fail-on: 'switch-rate' is not KEY=VALUE; " + form +
                         "\nRun with --help for more information.\n");
}

TEST_F(CliDiff, BadInputNamesTheFileAndLine) {
  writeGoodClips();
  cook(weightedManifest(1.5), "a.mmdb");
  write("bad.stick", "# seconds heading magnitude gait name\n1 0 1 walk go\n1 0 1 jog on\n");
  CliRun run = diff({"a.mmdb", "a.mmdb", "--stick", "bad.stick"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "mmcook: error: bad stick file: bad.stick:3: gait 'jog' must be walk or run\n");
  EXPECT_EQ(run.out, "");
  run = diff({"a.mmdb", "a.mmdb", "--stick", "missing.stick"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "mmcook: error: bad stick file: missing.stick: no such stick file\n");

  write("garbage.mmdb", std::string(256, 'x'));
  run = diff({"a.mmdb", "garbage.mmdb"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(
      run.err.rfind("mmcook: error: cannot diff: B 'garbage.mmdb' does not open as a database: "
                    "NotAnMmdb: ",
                    0),
      0u)
      << run.err;
  std::string damaged = readFile(folder_ / "a.mmdb");
  damaged.resize(damaged.size() / 2);
  write("half.mmdb", damaged);
  run = diff({"half.mmdb", "a.mmdb"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(
      run.err.rfind("mmcook: error: cannot diff: A 'half.mmdb' does not open as a database: ", 0),
      0u)
      << run.err;
}

TEST_F(CliDiff, CharactersAndSecondsOutOfRangeAreBadUsage) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--characters", "0"}, "--characters wants a whole number from 1 to 256, got 0"},
      {{"--characters", "257"}, "--characters wants a whole number from 1 to 256, got 257"},
      {{"--seconds", "0.5"}, "--seconds wants a number of seconds from 1 to 600, got 0.5"},
      {{"--seconds", "601"}, "--seconds wants a number of seconds from 1 to 600, got 601"},
  };
  for (const auto& [options, message] : cases) {
    std::vector<std::string> args{"diff", "a.mmdb", "b.mmdb"};
    args.insert(args.end(), options.begin(), options.end());
    const CliRun run = mmcook(args);
    EXPECT_EQ(run.exit_code, 2) << message;
    EXPECT_EQ(run.err, "mmcook: error: " + message + "\nRun with --help for more information.\n");
  }
  EXPECT_EQ(mmcook({"diff", "a.mmdb"}).exit_code, 2);
  EXPECT_EQ(mmcook({"diff", "a.mmdb", "b.mmdb", "--seconds", "many"}).exit_code, 2);
}

TEST_F(CliDiff, JsonIsValidAndHasTheDocumentedKeys) {
  writeGoodClips();
  cook(weightedManifest(1.5), "a.mmdb");
  cook(weightedManifest(0.05), "b.mmdb");
  write("zig.stick", "1 0 0 walk stand\n2 45 1 walk zig\n2 -45 1 run zag\n");
  const CliRun run = diff({"a.mmdb", "b.mmdb", "--json", "--stick", "zig.stick"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json doc = parsed(run.out);
  EXPECT_EQ(doc["a"]["file"].string(), "a.mmdb");
  EXPECT_EQ(doc["b"]["joint_count"].number(), 12);
  EXPECT_GT(doc["a"]["matchable_frames"].number(), 0);
  EXPECT_TRUE(std::get<bool>(doc["differ"].value));
  const Json& structure = doc["structure"];
  EXPECT_TRUE(std::get<bool>(structure["changed"].value));
  EXPECT_EQ(structure["change_count"].number(), 1);
  EXPECT_EQ(structure["settings"][0]["name"].string(), "weight.trajectory_direction");
  EXPECT_FLOAT_EQ(float(structure["settings"][0]["a"].number()), 1.5f);
  EXPECT_FLOAT_EQ(float(structure["settings"][0]["b"].number()), 0.05f);
  for (const char* key : {"skeleton", "feature_blocks", "ranges"})
    EXPECT_EQ(structure[key].size(), 0u) << key;
  EXPECT_EQ(structure["clips"]["changed"].size(), 0u);
  EXPECT_EQ(structure["tags"]["added"].size(), 0u);

  const Json& replay = doc["replay"];
  EXPECT_EQ(replay["characters"].number(), 4);
  EXPECT_EQ(replay["seconds"].number(), 6);
  EXPECT_EQ(replay["stick"].string(), "zig.stick");
  EXPECT_EQ(replay["stick_seconds"].number(), 5);
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(replay["skipped"].value));
  EXPECT_EQ(replay["steps"].number(), 360);
  for (const char* side : {"a", "b"}) {
    const Json& stats = replay[side];
    // A search every 0.1 s, less those the jump cooldown holds back after each switch.
    EXPECT_GT(stats["decisions"].number(), 4 * 6 * 10 * 0.5) << side;
    EXPECT_GT(stats["decisions_per_second"].number(), 0) << side;
    EXPECT_GE(stats["jumps"].number(), 4) << side;
    EXPECT_GE(stats["p95_cost"].number(), 0) << side;
    EXPECT_GE(stats["mean_cost"].number(), 0) << side;
    EXPECT_GT(stats["mean_trajectory_error"].number(), 0) << side;
    EXPECT_GE(stats["p95_trajectory_error"].number(), 0) << side;
    EXPECT_EQ(stats["trajectory_samples"].number(), 4 * 300) << side;
    // The motion measures: every key, the trajectory error the same as above.
    std::vector<std::string> keys, want;
    for (const auto& [key, value] : std::get<JsonObject>(stats["motion"].value)) {
      keys.push_back(key);
      EXPECT_GE(value.number(), 0) << side << " " << key;
    }
    for (std::string key : kMotionKeys) {
      std::replace(key.begin(), key.end(), '-', '_');
      want.push_back(key);
    }
    std::sort(want.begin(), want.end());
    EXPECT_EQ(keys, want) << side;
    const Json& motion = stats["motion"];
    EXPECT_EQ(motion["trajectory_error_mean"].number(), stats["mean_trajectory_error"].number());
    EXPECT_EQ(motion["trajectory_error_p95"].number(), stats["p95_trajectory_error"].number());
    EXPECT_GE(motion["pose_step_ratio"].number(), motion["pose_step_ratio_elsewhere"].number());
    const Json& detail = stats["motion_detail"];
    // 4 characters, 360 steps of a float 1/60 s.
    EXPECT_NEAR(detail["character_seconds"].number(), 4 * 6, 1e-4);
    EXPECT_EQ(detail["searches"].number(), stats["decisions"].number()) << side;
    // Every jump is a switch, a continuation, or a character's first frame.
    EXPECT_EQ(detail["switches"].number() + detail["continuations"].number() + 4,
              stats["jumps"].number())
        << side;
    EXPECT_NEAR(motion["switch_rate"].number(),
                detail["switches"].number() / detail["character_seconds"].number(), 1e-6)
        << side;
    EXPECT_GE(detail["contact_phases"].number(), 0) << side;  // the synthetic toes never plant
    EXPECT_LE(detail["phases_over_limit"].number(), detail["contact_phases"].number()) << side;
    EXPECT_GE(detail["held"].number(), 0) << side;
    EXPECT_GE(detail["sharp_turns"].number(), detail["responses_answered"].number()) << side;
    EXPECT_TRUE(std::holds_alternative<std::string>(detail["worst_joint_elsewhere"].value));
    // The clips where feet slide most: by name, each with its phases.
    const Json& sliding = stats["clips_sliding"];
    EXPECT_LE(sliding.size(), 2u) << side;
    double phases = 0;
    for (size_t i = 0; i < sliding.size(); ++i) {
      const Json& clip = sliding[i];
      EXPECT_TRUE(clip["name"].string() == "walk" || clip["name"].string() == "turning")
          << clip["name"].string();
      EXPECT_LE(clip["over_limit"].number(), clip["phases"].number());
      EXPECT_LE(clip["mean_drift_mm"].number(), clip["max_drift_mm"].number());
      EXPECT_LE(clip["across_over_limit"].number(), clip["across_phases"].number());
      phases += clip["phases"].number() + clip["across_phases"].number();
    }
    EXPECT_EQ(phases, detail["contact_phases"].number()) << side;
  }
  ASSERT_EQ(replay["clip_usage"].size(), 2u);
  double share = 0;
  for (size_t i = 0; i < 2; ++i) share += replay["clip_usage"][i]["share_a"].number();
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(
      replay["clip_usage"][0]["frames_a"].number() + replay["clip_usage"][1]["frames_a"].number(),
      4 * 360);
  EXPECT_TRUE(std::get<bool>(replay["decisions_differ"].value));
  EXPECT_GE(replay["characters_differing"].number(), 1);
  ASSERT_GE(replay["first_differences"].size(), 1u);
  const Json& first = replay["first_differences"][0];
  EXPECT_GE(first["time"].number(), 0);
  EXPECT_EQ(first["time"].number(), first["step"].number() / 60.0);
  const Json& a = first["a"];
  EXPECT_FALSE(a["reason"].string().empty());
  EXPECT_FALSE(a["winner"]["clip"].string().empty());
  // The winner's parts add up to its cost, block by block.
  double sum = a["transition_cost"].number() + a["bias"].number();
  for (const auto& [name, part] : std::get<JsonObject>(a["block_costs"].value))
    sum += part.number();
  EXPECT_NEAR(sum, a["cost"].number(), 1e-3 * std::max(1.0, a["cost"].number()));
  EXPECT_EQ(std::get<JsonObject>(a["block_costs"].value).size(), 7u);
  EXPECT_GE(a["other_winner"]["cost"].number(), 0);
}

// Real motion capture: bandai-1 cooked twice, the second with a fifth of the default trajectory
// direction weight. The diff names the weight, the replay decides differently, and the cost
// the search minimizes drops (the direction block weighs less in every candidate's cost).
TEST_F(CliDiff, BandaiReweightedIsAStructureAndDecisionChange) {
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "bandai-1";
  if (!fs::exists(dir)) GTEST_SKIP() << "no motion corpus at " << dir;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".bvh") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 100u);
  for (const auto& [name, weight] : {std::pair<std::string, double>{"a", 1.5}, {"b", 0.3}}) {
    std::ostringstream m;
    m << "[weights]\ntrajectory_direction = " << weight << "\n";
    for (const std::string& f : files)
      m << "\n[[clip]]\nsource = " << mmdb::cook::JsonWriter::escape(f) << "\n";
    write(name + ".toml", m.str());
    const CliRun run =
        mmcook({"cook", name + ".toml", "-o", name + ".mmdb", "--quiet", "--no-cache", "-j", "2"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  const CliRun same = mmcook(
      {"diff", "a.mmdb", "a.mmdb", "--characters", "4", "--seconds", "5", "--fail-on-change"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("\nresult: no change\n"), std::string::npos) << same.out;

  const CliRun run = mmcook({"diff", "a.mmdb", "b.mmdb", "--characters", "8", "--seconds", "10",
                             "--json", "--fail-on-change"});
  EXPECT_EQ(run.exit_code, 4) << run.err;
  const Json doc = parsed(run.out);
  EXPECT_EQ(doc["a"]["clip_count"].number(), double(files.size()));
  const Json& structure = doc["structure"];
  EXPECT_EQ(structure["change_count"].number(), 1);
  EXPECT_EQ(structure["settings"][0]["name"].string(), "weight.trajectory_direction");
  const Json& replay = doc["replay"];
  EXPECT_TRUE(std::get<bool>(replay["decisions_differ"].value));
  EXPECT_LT(replay["b"]["mean_cost"].number(), replay["a"]["mean_cost"].number());
  EXPECT_EQ(replay["clip_usage"].size(), files.size());
  // Both replays play frames of more than one clip, and usage shifts between clips.
  double moved = 0;
  for (size_t i = 0; i < replay["clip_usage"].size(); ++i)
    moved += std::abs(replay["clip_usage"][i]["share_b"].number() -
                      replay["clip_usage"][i]["share_a"].number());
  EXPECT_GT(moved, 0.0);
  // The first differing decision: B's winner scores worse than A's winner under A's query (else
  // A would have picked it), unless it is not a candidate there.
  const Json& a = replay["first_differences"][0]["a"];
  if (!std::holds_alternative<std::nullptr_t>(a.value) &&
      !std::holds_alternative<std::nullptr_t>(a["other_winner"].value) &&
      std::get<bool>(a["other_winner"]["matchable"].value)) {
    EXPECT_GE(a["other_winner"]["cost"].number(), a["cost"].number());
  }
}

}  // namespace
