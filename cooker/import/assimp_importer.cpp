// FBX and the other formats Assimp reads -> RawClip.
//
// Conventions (docs/cook.md "Import"):
//  - Joints are the nodes an animation channel (of any take) drives and their ancestors, so every
//    take of a file has the same skeleton. Mesh, camera, light and helper nodes that drive nothing
//    are left out. A file without animation (a character or a bind pose) has no clip to import,
//    but inspection still lists its skeleton: the skinned meshes' bones, their ancestors and the
//    mesh-less nodes below bones (end joints).
//  - Nodes above the top joint (Assimp's "RootNode", an armature object, a static unit node) are
//    composed into the top joint, so the skeleton starts where an artist would say it does. A top
//    node with one child joint and no motion of its own counts as such a node.
//  - FBX pivot helpers (`<joint>_$AssimpFbx$_<part>`) never become joints: the importer asks
//    Assimp to fold them into their joint, and any that remain are composed like other in-between
//    nodes, because every joint's local transform is rebuilt from world transforms.
//  - Values stay in the file's units as seen inside the skeleton (the top joint's space, without
//    its scale); RawClip::declared_unit_scale says how many metres that unit is (FBX
//    UnitScaleFactor / 100 times the scale above the skeleton; 1 for glTF). A declared scale that
//    makes the skeleton shorter than 10 cm or taller than 10 m is ignored (set to 0) with a
//    warning, and the cook takes the scale from the preset or the hip height instead.
//  - FBX axes (UpAxis, FrontAxis, CoordAxis and their signs) are converted to Y up.
//  - Sampling happens at the source's frame rate: FBX's declared frame rate, else the spacing of
//    the densest channel's keys, else 30 fps. Positions and scales interpolate linearly,
//    rotations by slerp; a joint without a channel holds its bind transform.
#include "import/importer.h"

#include "core/errors.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "core/pose_space.h"

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/metadata.h>
#include <assimp/scene.h>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat3x3.hpp>
#include <glm/mat4x4.hpp>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

namespace mmdb::cook {
namespace {

constexpr double kDefaultFrameRate = 30.0;
constexpr double kMinPlausibleHeightM = 0.1;
constexpr double kMaxPlausibleHeightM = 10.0;

std::string lowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

std::string fileName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// ---------------------------------------------------------------------------------------------
// Reading the scene

const aiScene* readScene(Assimp::Importer& importer, const std::string& path) {
  bool missing = false;
  const std::string problem = regularFileProblem(path, &missing);
  if (missing)
    throw InputError(path +
                     ": file not found; check the path (relative paths are resolved "
                     "against the manifest's folder or the working directory)");
  if (!problem.empty())  // checked before Assimp opens it: a FIFO or a device never ends
    throw InputError(path + ": cannot open: " + problem + "; give the path of a motion file");
  // Fold FBX pivot helper nodes into their joints where Assimp can.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_CAMERAS, false);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_LIGHTS, false);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_MATERIALS, false);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_TEXTURES, false);
  const aiScene* scene = importer.ReadFile(path, 0);
  if (!scene || !scene->mRootNode) {
    const char* reason = importer.GetErrorString();
    throw InputError(path + ": Assimp cannot read " + fileName(path) + ": " +
                     (reason && *reason ? reason : "unknown format") +
                     ". The file may be truncated or corrupt: re-export it from the animation "
                     "tool (binary FBX 7.x works best) or convert it to BVH");
  }
  return scene;
}

// ---------------------------------------------------------------------------------------------
// Scene metadata: units, axes, frame rate

template <typename T>
bool metaNumber(const aiScene& scene, const char* key, T& out) {
  if (!scene.mMetaData) return false;
  const aiMetadata& md = *scene.mMetaData;
  for (unsigned i = 0; i < md.mNumProperties; ++i) {
    if (std::string_view(md.mKeys[i].C_Str()) != key) continue;
    const aiMetadataEntry& e = md.mValues[i];
    switch (e.mType) {
      case AI_BOOL:
        out = static_cast<T>(*static_cast<bool*>(e.mData));
        return true;
      case AI_INT32:
        out = static_cast<T>(*static_cast<int32_t*>(e.mData));
        return true;
      case AI_UINT64:
        out = static_cast<T>(*static_cast<uint64_t*>(e.mData));
        return true;
      case AI_FLOAT:
        out = static_cast<T>(*static_cast<float*>(e.mData));
        return true;
      case AI_DOUBLE:
        out = static_cast<T>(*static_cast<double*>(e.mData));
        return true;
      default:
        return false;
    }
  }
  return false;
}

std::string metaString(const aiScene& scene, const char* key) {
  if (!scene.mMetaData) return {};
  aiString s;
  return scene.mMetaData->Get(key, s) ? std::string(s.C_Str()) : std::string();
}

// FbxTime::EMode -> frames per second; 0 for "default" and "custom".
double fbxTimeModeRate(int mode) {
  switch (mode) {
    case 1:
      return 120.0;
    case 2:
      return 100.0;
    case 3:
      return 60.0;
    case 4:
      return 50.0;
    case 5:
      return 48.0;
    case 6:
    case 7:
      return 30.0;
    case 8:
    case 9:
      return 30000.0 / 1001.0;
    case 10:
      return 25.0;
    case 11:
      return 24.0;
    case 12:
      return 1000.0;
    case 13:
      return 24000.0 / 1001.0;
    case 15:
      return 96.0;
    case 16:
      return 72.0;
    case 17:
      return 60000.0 / 1001.0;
    case 18:
      return 120000.0 / 1001.0;
    default:
      return 0.0;
  }
}

struct SceneConventions {
  double metres_per_file_unit = 0;  // 0 = not declared
  glm::dmat3 to_y_up{1.0};
  double frame_rate = 0;  // 0 = not declared
  std::vector<std::string> notes;
};

SceneConventions readConventions(const aiScene& scene, const std::string& path) {
  SceneConventions c;
  const std::string ext = lowerExtension(path);
  double unit_cm = 0;
  if (metaNumber(scene, "UnitScaleFactor", unit_cm) && unit_cm > 0) {
    c.metres_per_file_unit = unit_cm / 100.0;
    c.notes.push_back(fmt::format("file unit: {:g} cm (FBX UnitScaleFactor)", unit_cm));
  } else if (ext == ".gltf" || ext == ".glb") {
    c.metres_per_file_unit = 1.0;
    c.notes.push_back("file unit: 1 m (glTF)");
  }
  int up = 1, up_sign = 1, front = 2, front_sign = 1, coord = 0, coord_sign = 1;
  if (metaNumber(scene, "UpAxis", up)) {
    metaNumber(scene, "UpAxisSign", up_sign);
    metaNumber(scene, "FrontAxis", front);
    metaNumber(scene, "FrontAxisSign", front_sign);
    metaNumber(scene, "CoordAxis", coord);
    metaNumber(scene, "CoordAxisSign", coord_sign);
    c.to_y_up = axisConversionToYUp(up, up_sign, front, front_sign, coord, coord_sign);
    if (c.to_y_up != glm::dmat3(1.0))
      c.notes.push_back("axes converted to Y up (file: up axis " + std::to_string(up) + " sign " +
                        std::to_string(up_sign) + ", front axis " + std::to_string(front) +
                        " sign " + std::to_string(front_sign) + ")");
  }
  int mode = 0;
  double custom = 0;
  if (metaNumber(scene, "FrameRate", mode)) {
    c.frame_rate = fbxTimeModeRate(mode);
    if (c.frame_rate == 0 && metaNumber(scene, "CustomFrameRate", custom) && custom > 0)
      c.frame_rate = custom;
  }
  const std::string generator = metaString(scene, "SourceAsset_Generator");
  if (!generator.empty()) c.notes.push_back("written by: " + generator);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Node table: the scene's nodes in pre-order (parents first)

struct NodeTable {
  std::vector<const aiNode*> nodes;
  std::vector<int> parent;
  std::unordered_map<std::string, int> by_name;
};

NodeTable flattenNodes(const aiNode* root) {
  NodeTable t;
  std::vector<std::pair<const aiNode*, int>> stack{{root, -1}};
  while (!stack.empty()) {
    auto [node, parent] = stack.back();
    stack.pop_back();
    const int index = static_cast<int>(t.nodes.size());
    t.nodes.push_back(node);
    t.parent.push_back(parent);
    t.by_name.emplace(node->mName.C_Str(), index);
    // Some importers (RAW) leave null entries in a node's children: skip them.
    for (unsigned i = node->mChildren ? node->mNumChildren : 0; i-- > 0;)
      if (node->mChildren[i]) stack.push_back({node->mChildren[i], index});
  }
  return t;
}

bool isPivotHelper(const std::string& name) {
  return name.find("_$AssimpFbx$_") != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Choosing the joints

bool channelIsStatic(const aiNodeAnim& ch) {
  auto same3 = [](const aiVector3D& a, const aiVector3D& b) {
    return std::abs(a.x - b.x) < 1e-5f && std::abs(a.y - b.y) < 1e-5f &&
           std::abs(a.z - b.z) < 1e-5f;
  };
  for (unsigned k = 1; k < ch.mNumPositionKeys; ++k)
    if (!same3(ch.mPositionKeys[k].mValue, ch.mPositionKeys[0].mValue)) return false;
  for (unsigned k = 1; k < ch.mNumScalingKeys; ++k)
    if (!same3(ch.mScalingKeys[k].mValue, ch.mScalingKeys[0].mValue)) return false;
  for (unsigned k = 1; k < ch.mNumRotationKeys; ++k) {
    const aiQuaternion& a = ch.mRotationKeys[k].mValue;
    const aiQuaternion& b = ch.mRotationKeys[0].mValue;
    const double dot = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    if (std::abs(dot) < 1.0 - 1e-9) return false;
  }
  return true;
}

struct JointSelection {
  std::vector<int> joint_nodes;    // node indices, parents first
  std::vector<int> joint_parents;  // index into joint_nodes, -1 for the top joint
  std::vector<std::string> notes;
};

// `marked` are the nodes that must be joints; `collapsible(node)` says whether a top node with a
// single child joint may be composed into that child (it has no motion and is no bone).
template <typename Collapsible>
JointSelection selectJoints(const NodeTable& table, std::vector<char> marked,
                            Collapsible collapsible) {
  const int n = static_cast<int>(table.nodes.size());
  // A channel on a pivot helper moves the joint the helper belongs to.
  for (int i = 0; i < n; ++i) {
    const std::string name = table.nodes[i]->mName.C_Str();
    if (!marked[i] || !isPivotHelper(name)) continue;
    auto owner = table.by_name.find(name.substr(0, name.find("_$AssimpFbx$_")));
    if (owner != table.by_name.end()) marked[owner->second] = 1;
  }
  // Marked nodes and their ancestors; RootNode (index 0) only when it is animated itself.
  std::vector<char> in(n, 0);
  for (int i = 0; i < n; ++i)
    for (int j = i; j > 0 && marked[i] && !in[j]; j = table.parent[j]) in[j] = 1;
  in[0] = marked[0];

  // Keep the biggest tree; animated cameras or props beside the character are dropped.
  std::vector<int> top_of(n, -1), size_of_top(n, 0);
  for (int i = 0; i < n; ++i) {
    if (!in[i]) continue;
    const int p = table.parent[i];
    top_of[i] = (p >= 0 && in[p]) ? top_of[p] : i;
    ++size_of_top[top_of[i]];
  }
  int top = -1;
  for (int i = 0; i < n; ++i)
    if (in[i] && top_of[i] == i && (top < 0 || size_of_top[i] > size_of_top[top])) top = i;
  JointSelection sel;
  if (top < 0) return sel;
  std::string dropped;
  for (int i = 0; i < n; ++i)
    if (in[i] && top_of[i] == i && i != top)
      dropped += (dropped.empty() ? "'" : ", '") + std::string(table.nodes[i]->mName.C_Str()) + "'";
  if (!dropped.empty()) sel.notes.push_back("nodes outside the skeleton ignored: " + dropped);

  // A top node with one child and no motion of its own (an armature object, a unit node, a
  // pivot helper) is composed into that child instead of becoming a joint.
  auto childrenInSet = [&](int node) {
    std::vector<int> kids;
    for (int i = node + 1; i < n; ++i)
      if (table.parent[i] == node && in[i]) kids.push_back(i);
    return kids;
  };
  for (auto kids = childrenInSet(top);
       kids.size() == 1 && (isPivotHelper(table.nodes[top]->mName.C_Str()) || collapsible(top));
       kids = childrenInSet(top)) {
    if (!isPivotHelper(table.nodes[top]->mName.C_Str()))
      sel.notes.push_back("static node '" + std::string(table.nodes[top]->mName.C_Str()) +
                          "' above the skeleton composed into the top joint");
    top = kids[0];
  }

  // Joints in pre-order; pivot helpers are composed into the joint below them.
  std::vector<int> joint_of(n, -1);
  std::vector<char> under_top(n, 0);
  for (int i = top; i < n; ++i) {
    under_top[i] = i == top || (table.parent[i] >= 0 && under_top[table.parent[i]]);
    if (!under_top[i] || !in[i] || isPivotHelper(table.nodes[i]->mName.C_Str())) continue;
    int p = table.parent[i];
    while (i != top && joint_of[p] < 0) p = table.parent[p];
    joint_of[i] = static_cast<int>(sel.joint_nodes.size());
    sel.joint_nodes.push_back(i);
    sel.joint_parents.push_back(i == top ? -1 : joint_of[p]);
  }
  return sel;
}

// Every take of a file gets the same skeleton: the nodes any take animates, with their
// ancestors. A take without a channel for some joint holds that joint's bind transform.
JointSelection jointsForAnimations(const aiScene& scene, const NodeTable& table,
                                   std::vector<std::string>& notes) {
  const int n = static_cast<int>(table.nodes.size());
  std::vector<char> marked(n, 0), moving(n, 0);
  std::vector<std::string> unknown;
  for (unsigned a = 0; a < scene.mNumAnimations; ++a) {
    const aiAnimation& anim = *scene.mAnimations[a];
    for (unsigned c = 0; c < anim.mNumChannels; ++c) {
      const aiNodeAnim* ch = anim.mChannels[c];
      auto it = table.by_name.find(ch->mNodeName.C_Str());
      if (it == table.by_name.end()) {
        unknown.push_back(ch->mNodeName.C_Str());
        continue;
      }
      marked[it->second] = 1;
      moving[it->second] = moving[it->second] || !channelIsStatic(*ch);
    }
  }
  if (!unknown.empty())
    notes.push_back(std::to_string(unknown.size()) + " channel(s) drive no node and are ignored " +
                    "(first: '" + unknown.front() + "')");
  return selectJoints(table, marked, [&](int node) { return !moving[node]; });
}

// Without animation the skeleton is what skinned meshes bind to: their bones, the bones'
// ancestors and the nodes below bones that hold no mesh (end joints).
JointSelection jointsWithoutAnimation(const aiScene& scene, const NodeTable& table) {
  const int n = static_cast<int>(table.nodes.size());
  std::unordered_set<std::string> bones;
  for (unsigned m = 0; m < scene.mNumMeshes; ++m)
    for (unsigned b = 0; b < scene.mMeshes[m]->mNumBones; ++b)
      bones.insert(scene.mMeshes[m]->mBones[b]->mName.C_Str());
  std::vector<char> marked(n, 0);
  for (int i = 1; i < n; ++i) {
    const bool bone = bones.count(table.nodes[i]->mName.C_Str()) > 0;
    const int p = table.parent[i];
    marked[i] = bone || (p > 0 && marked[p] && table.nodes[i]->mNumMeshes == 0);
  }
  return selectJoints(table, marked,
                      [&](int node) { return !bones.count(table.nodes[node]->mName.C_Str()); });
}

// ---------------------------------------------------------------------------------------------
// Sampling

glm::dvec3 toGlm(const aiVector3D& v) { return {v.x, v.y, v.z}; }
glm::dquat toGlm(const aiQuaternion& q) { return glm::dquat(q.w, q.x, q.y, q.z); }

glm::dmat4 toGlm(const aiMatrix4x4& m) {
  // aiMatrix4x4 is row-major with translation in the last column; glm is column-major.
  glm::dmat4 r;
  for (int row = 0; row < 4; ++row)
    for (int col = 0; col < 4; ++col) r[col][row] = m[row][col];
  return r;
}

glm::dmat4 compose(const glm::dvec3& t, const glm::dquat& r, const glm::dvec3& s) {
  glm::dmat4 m = glm::mat4_cast(r);
  m[0] *= s.x;
  m[1] *= s.y;
  m[2] *= s.z;
  m[3] = glm::dvec4(t, 1.0);
  return m;
}

// Index k with keys[k].mTime <= t < keys[k+1].mTime, clamped; `cursor` speeds up forward sweeps.
template <typename Key>
unsigned findKey(const Key* keys, unsigned count, double t, unsigned& cursor) {
  if (cursor >= count || keys[cursor].mTime > t) cursor = 0;
  while (cursor + 1 < count && keys[cursor + 1].mTime <= t) ++cursor;
  return cursor;
}

struct ChannelCursor {
  unsigned pos = 0, rot = 0, scale = 0;
};

glm::dvec3 sampleVector(const aiVectorKey* keys, unsigned count, double t, unsigned& cursor,
                        const glm::dvec3& fallback) {
  if (count == 0) return fallback;
  const unsigned k = findKey(keys, count, t, cursor);
  if (k + 1 >= count || t <= keys[k].mTime) return toGlm(keys[k].mValue);
  const double span = keys[k + 1].mTime - keys[k].mTime;
  const double a = span > 0 ? (t - keys[k].mTime) / span : 0.0;
  return glm::mix(toGlm(keys[k].mValue), toGlm(keys[k + 1].mValue), a);
}

glm::dquat sampleRotation(const aiQuatKey* keys, unsigned count, double t, unsigned& cursor,
                          const glm::dquat& fallback) {
  if (count == 0) return fallback;
  const unsigned k = findKey(keys, count, t, cursor);
  if (k + 1 >= count || t <= keys[k].mTime) return glm::normalize(toGlm(keys[k].mValue));
  const double span = keys[k + 1].mTime - keys[k].mTime;
  const double a = span > 0 ? (t - keys[k].mTime) / span : 0.0;
  glm::dquat q0 = glm::normalize(toGlm(keys[k].mValue));
  glm::dquat q1 = glm::normalize(toGlm(keys[k + 1].mValue));
  if (glm::dot(q0, q1) < 0) q1 = -q1;
  return glm::normalize(glm::slerp(q0, q1, a));
}

struct BindParts {
  glm::dvec3 t{0}, s{1};
  glm::dquat r{1, 0, 0, 0};
};

BindParts decomposeNode(const aiNode& node) {
  aiVector3D s, t;
  aiQuaternion r;
  node.mTransformation.Decompose(s, r, t);
  return {toGlm(t), toGlm(s), glm::normalize(toGlm(r))};
}

// Rotation of a 3x3 with its scale removed; `scale` gets the mean column length.
glm::dquat rotationOf(const glm::dmat3& m, double* scale, bool* mirrored) {
  glm::dvec3 c0 = m[0], c1 = m[1], c2 = m[2];
  const double l0 = glm::length(c0), l1 = glm::length(c1), l2 = glm::length(c2);
  if (scale) *scale = (l0 + l1 + l2) / 3.0;
  c0 /= l0;
  c1 = glm::normalize(c1 - glm::dot(c0, c1) * c0);
  c2 = glm::normalize(c2 - glm::dot(c0, c2) * c0 - glm::dot(c1, c2) * c1);
  const bool neg = glm::dot(glm::cross(c0, c1), c2) < 0;
  if (mirrored) *mirrored = neg;
  if (neg) c2 = -c2;
  return glm::normalize(glm::quat_cast(glm::dmat3(c0, c1, c2)));
}

// Evaluates the scene's nodes at one time (channels where present, bind transforms elsewhere)
// and turns the chosen joints' world transforms into local ones.
class PoseEvaluator {
 public:
  PoseEvaluator(const NodeTable& table, const JointSelection& sel, const aiAnimation* anim,
                const glm::dmat3& to_y_up)
      : table_(table), sel_(sel), to_y_up_(to_y_up) {
    const int n = static_cast<int>(table.nodes.size());
    needed_.assign(n, 0);
    for (int node : sel.joint_nodes)
      for (int a = node; a >= 0 && !needed_[a]; a = table.parent[a]) needed_[a] = 1;
    channel_.assign(n, nullptr);
    cursor_.assign(n, {});
    bind_.resize(n);
    for (int i = 0; i < n; ++i) bind_[i] = decomposeNode(*table.nodes[i]);
    if (anim)
      for (unsigned c = 0; c < anim->mNumChannels; ++c) {
        auto it = table.by_name.find(anim->mChannels[c]->mNodeName.C_Str());
        if (it != table.by_name.end()) channel_[it->second] = anim->mChannels[c];
      }
    global_.assign(n, glm::dmat4(1.0));
    proper_axes_ = glm::determinant(to_y_up) > 0;
  }

  // World transforms at tick `t` (bind pose when `bind` is set).
  void evaluate(double t, bool bind) {
    for (size_t i = 0; i < table_.nodes.size(); ++i) {
      if (!needed_[i]) continue;
      glm::dmat4 local;
      const aiNodeAnim* ch = bind ? nullptr : channel_[i];
      if (ch) {
        ChannelCursor& cur = cursor_[i];
        const BindParts& b = bind_[i];
        local = compose(sampleVector(ch->mPositionKeys, ch->mNumPositionKeys, t, cur.pos, b.t),
                        sampleRotation(ch->mRotationKeys, ch->mNumRotationKeys, t, cur.rot, b.r),
                        sampleVector(ch->mScalingKeys, ch->mNumScalingKeys, t, cur.scale, b.s));
      } else {
        local = toGlm(table_.nodes[i]->mTransformation);
      }
      const int p = table_.parent[i];
      global_[i] = p >= 0 ? global_[p] * local : local;
    }
  }

  // Uniform scale of the top joint's world transform: the size of the skeleton's unit.
  double topScale() const {
    double s = 1;
    rotationOf(glm::dmat3(global_[sel_.joint_nodes[0]]), &s, nullptr);
    return s > 0 ? s : 1.0;
  }

  // Local rotations and translations (translations divided by `unit`), appended.
  void localPose(double unit, std::vector<glm::quat>& rotations,
                 std::vector<glm::vec3>& translations, bool* odd_scale) {
    const size_t count = sel_.joint_nodes.size();
    world_r_.resize(count);
    world_p_.resize(count);
    for (size_t j = 0; j < count; ++j) {
      const glm::dmat4& g = global_[sel_.joint_nodes[j]];
      glm::dmat3 m = to_y_up_ * glm::dmat3(g);
      if (!proper_axes_) m = m * glm::transpose(to_y_up_);  // a reflection: conjugate instead
      double s = 1;
      bool mirrored = false;
      world_r_[j] = rotationOf(m, &s, &mirrored);
      world_p_[j] = to_y_up_ * glm::dvec3(g[3]) / unit;
      if (odd_scale && (mirrored || std::abs(s / unit - 1.0) > 1e-3)) *odd_scale = true;
    }
    for (size_t j = 0; j < count; ++j) {
      glm::dquat r;
      glm::dvec3 t;
      localFromWorld(world_r_.data(), world_p_.data(), j, sel_.joint_parents[j], r, t);
      rotations.push_back(glm::quat(glm::normalize(r)));
      translations.push_back(glm::vec3(t));
    }
  }

 private:
  const NodeTable& table_;
  const JointSelection& sel_;
  glm::dmat3 to_y_up_;
  bool proper_axes_ = true;
  std::vector<char> needed_;
  std::vector<const aiNodeAnim*> channel_;
  std::vector<ChannelCursor> cursor_;
  std::vector<BindParts> bind_;
  std::vector<glm::dmat4> global_;
  std::vector<glm::dquat> world_r_;
  std::vector<glm::dvec3> world_p_;
};

// ---------------------------------------------------------------------------------------------
// Takes

struct TakeTiming {
  double ticks_per_second = 0;
  double first_tick = 0;
  double last_tick = 0;
  double frame_rate = 0;
  int frame_count = 1;
};

// The rate of evenly spaced keys (baked motion capture), or 0 when the keys are sparse or
// uneven (hand-keyed animation), which says nothing about a frame rate.
double keySpacingRate(const aiAnimation& anim, double tps) {
  constexpr unsigned kMinKeys = 8;
  const aiNodeAnim* densest = nullptr;
  for (unsigned c = 0; c < anim.mNumChannels; ++c)
    if (!densest || anim.mChannels[c]->mNumRotationKeys > densest->mNumRotationKeys)
      densest = anim.mChannels[c];
  if (!densest || densest->mNumRotationKeys < kMinKeys) return 0;
  double lo = 0, hi = 0;
  for (unsigned k = 1; k < densest->mNumRotationKeys; ++k) {
    const double gap = densest->mRotationKeys[k].mTime - densest->mRotationKeys[k - 1].mTime;
    lo = k == 1 ? gap : std::min(lo, gap);
    hi = k == 1 ? gap : std::max(hi, gap);
  }
  if (lo <= 0 || hi > lo * 1.01) return 0;
  const double rate = tps / (0.5 * (lo + hi));
  return (rate >= 10.0 && rate <= 1000.0) ? std::round(rate * 1000.0) / 1000.0 : 0.0;
}

// `where` names the file and take in messages. Times, rates and the frame count are checked
// against core/limits.h before any frame is allocated.
TakeTiming takeTiming(const aiAnimation& anim, double declared_rate, const std::string& where) {
  TakeTiming t;
  bool any = false;
  double lo = 0, hi = 0;
  auto widen = [&](double time) {
    lo = any ? std::min(lo, time) : time;
    hi = any ? std::max(hi, time) : time;
    any = true;
  };
  for (unsigned c = 0; c < anim.mNumChannels; ++c) {
    const aiNodeAnim& ch = *anim.mChannels[c];
    if (ch.mNumPositionKeys) {
      widen(ch.mPositionKeys[0].mTime);
      widen(ch.mPositionKeys[ch.mNumPositionKeys - 1].mTime);
    }
    if (ch.mNumRotationKeys) {
      widen(ch.mRotationKeys[0].mTime);
      widen(ch.mRotationKeys[ch.mNumRotationKeys - 1].mTime);
    }
    if (ch.mNumScalingKeys) {
      widen(ch.mScalingKeys[0].mTime);
      widen(ch.mScalingKeys[ch.mNumScalingKeys - 1].mTime);
    }
  }
  t.first_tick = lo;
  t.last_tick = hi;
  t.frame_rate = declared_rate;
  if (anim.mTicksPerSecond > 0) {
    t.ticks_per_second = anim.mTicksPerSecond;
    if (t.frame_rate <= 0) t.frame_rate = keySpacingRate(anim, t.ticks_per_second);
    if (t.frame_rate <= 0) t.frame_rate = kDefaultFrameRate;
  } else {
    // No tick rate: ticks are taken to be frames.
    if (t.frame_rate <= 0) t.frame_rate = kDefaultFrameRate;
    t.ticks_per_second = t.frame_rate;
  }
  const double seconds = (hi - lo) / t.ticks_per_second;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(seconds) || seconds < 0)
    throw InputError(
        fmt::format("{}: key times run from {:g} to {:g} ticks at {:g} ticks per "
                    "second, which is not a usable time span; re-export the take",
                    where, lo, hi, t.ticks_per_second));
  if (!(t.frame_rate >= kMinFrameRate && t.frame_rate <= kMaxFrameRate))
    throw InputError(
        fmt::format("{}: the frame rate is {:g} Hz; mmcook reads {:g} to {:g} Hz: "
                    "re-export the take at another rate",
                    where, t.frame_rate, kMinFrameRate, kMaxFrameRate));
  if (seconds > kMaxClipSeconds)
    throw InputError(
        fmt::format("{}: the take lasts {:g} s (key times {:g} to {:g} ticks at {:g} "
                    "per second), over the {:g} s (24 hours) limit of a clip; check "
                    "the key times or split the take",
                    where, seconds, lo, hi, t.ticks_per_second, kMaxClipSeconds));
  t.frame_count = static_cast<int>(std::floor(seconds * t.frame_rate + 1e-6)) + 1;
  return t;
}

std::string takeName(const aiScene& scene, unsigned index) {
  const char* name = scene.mAnimations[index]->mName.C_Str();
  return *name ? std::string(name) : "take " + std::to_string(index);
}

std::string takeList(const aiScene& scene) {
  std::string list;
  for (unsigned i = 0; i < scene.mNumAnimations; ++i)
    list += (i ? ", " : "") + std::to_string(i) + ": '" + takeName(scene, i) + "'";
  return list;
}

// `take`: exact name, an index, or the part after '|' (Blender writes "Armature|Action").
unsigned chooseTake(const aiScene& scene, const std::string& path, const std::string& take) {
  const unsigned count = scene.mNumAnimations;
  if (take.empty()) {
    spdlog::info(
        "{}: cooking take 0 '{}' (the file has {} take{}; choose another with take = "
        "name or index)",
        path, takeName(scene, 0), count, count == 1 ? "" : "s");
    return 0;
  }
  for (unsigned i = 0; i < count; ++i)
    if (takeName(scene, i) == take) return i;
  if (std::all_of(take.begin(), take.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
      take.size() < 9) {
    const unsigned index = static_cast<unsigned>(std::stoul(take));
    if (index < count) return index;
  }
  int found = -1;
  for (unsigned i = 0; i < count; ++i) {
    const std::string name = takeName(scene, i);
    const size_t bar = name.rfind('|');
    if (bar != std::string::npos && name.substr(bar + 1) == take) {
      if (found >= 0) {
        found = -2;
        break;
      }
      found = static_cast<int>(i);
    }
  }
  if (found >= 0) return static_cast<unsigned>(found);
  throw InputError(path + ": no take '" + take + "'; the file has " + std::to_string(count) +
                   " take(s): " + takeList(scene) + ". Give one of these names or indices");
}

// Metres per value unit, or 0 when the declared one is implausible for a character.
double checkedUnitScale(double declared, const std::vector<glm::vec3>& bind_world,
                        std::vector<std::string>& warnings) {
  if (declared <= 0 || bind_world.size() < 2) return declared;
  glm::vec3 lo = bind_world[0], hi = bind_world[0];
  for (const auto& p : bind_world) lo = glm::min(lo, p), hi = glm::max(hi, p);
  const glm::vec3 ext = hi - lo;
  const double size_m = std::max({ext.x, ext.y, ext.z}) * declared;
  if (size_m <= 0 || (size_m >= kMinPlausibleHeightM && size_m <= kMaxPlausibleHeightM))
    return declared;
  const std::string msg = fmt::format(
      "the file declares {:g} m per unit, which makes the skeleton {:.3g} m across; ignoring it "
      "(the cook takes the scale from the manifest, the preset or the hip height)",
      declared, size_m);
  warnings.push_back(msg);
  return 0.0;
}

std::vector<glm::vec3> worldPositions(const Skeleton& s) {
  std::vector<glm::vec3> p(s.names.size());
  std::vector<glm::quat> r(s.names.size());
  for (size_t j = 0; j < s.names.size(); ++j) {
    const int parent = s.parents[j];
    if (parent < 0) {
      p[j] = s.offsets[j];
      r[j] = s.bind_rotations[j];
    } else {
      p[j] = p[parent] + r[parent] * s.offsets[j];
      r[j] = r[parent] * s.bind_rotations[j];
    }
  }
  return p;
}

// Picks each frame's quaternion sign nearest the previous frame's, so differences stay short.
void keepRotationsContinuous(RawClip& clip) {
  const size_t joints = clip.skeleton.names.size();
  for (size_t j = 0; j < joints; ++j) {
    if (clip.frame_count > 0 && clip.rotations[j].w < 0) clip.rotations[j] = -clip.rotations[j];
    for (size_t f = 1; f < static_cast<size_t>(clip.frame_count); ++f) {
      glm::quat& q = clip.rotations[f * joints + j];
      if (glm::dot(q, clip.rotations[(f - 1) * joints + j]) < 0) q = -q;
    }
  }
}

struct ImportedTake {
  RawClip clip;
  std::vector<std::string> notes;     // conventions applied
  std::vector<std::string> warnings;  // what a user may have to fix
};

// Builds the skeleton (bind pose) and, when `anim` is given, samples every frame.
ImportedTake buildClip(const NodeTable& table, const SceneConventions& conv,
                       const JointSelection& sel, const aiAnimation* anim, const std::string& path,
                       bool sample_frames) {
  ImportedTake out;
  RawClip& clip = out.clip;
  clip.source_path = path;
  clip.name = std::filesystem::path(path).stem().string();
  PoseEvaluator eval(table, sel, anim, conv.to_y_up);
  eval.evaluate(0.0, true);
  const double unit = eval.topScale();
  for (int node : sel.joint_nodes) clip.skeleton.names.push_back(table.nodes[node]->mName.C_Str());
  clip.skeleton.parents = sel.joint_parents;
  bool odd_scale = false;
  eval.localPose(unit, clip.skeleton.bind_rotations, clip.skeleton.offsets, &odd_scale);
  for (glm::quat& q : clip.skeleton.bind_rotations)
    if (q.w < 0) q = -q;
  validateSkeleton(clip.skeleton, path);
  if (std::abs(unit - 1.0) > 1e-6)
    out.notes.push_back(fmt::format("scale {:g} above the skeleton folded into the unit", unit));
  const double declared = conv.metres_per_file_unit * unit;
  clip.declared_unit_scale =
      checkedUnitScale(declared, worldPositions(clip.skeleton), out.warnings);

  if (anim) {
    const TakeTiming timing =
        takeTiming(*anim, conv.frame_rate, path + ": take '" + anim->mName.C_Str() + "'");
    clip.frame_rate = timing.frame_rate;
    clip.frame_count = timing.frame_count;
    if (sample_frames) {
      const size_t n = clip.skeleton.names.size() * static_cast<size_t>(timing.frame_count);
      if (n > kMaxClipSamples)
        throw InputError(
            fmt::format("{}: the take has {} frames of {} joints, more than the {} "
                        "joint samples a clip may hold; split the take",
                        path, timing.frame_count, clip.skeleton.names.size(), kMaxClipSamples));
      clip.rotations.reserve(n);
      clip.translations.reserve(n);
      for (int f = 0; f < timing.frame_count; ++f) {
        const double tick = timing.first_tick + f / timing.frame_rate * timing.ticks_per_second;
        eval.evaluate(std::min(tick, timing.last_tick), false);
        eval.localPose(unit, clip.rotations, clip.translations, &odd_scale);
      }
      keepRotationsContinuous(clip);
    }
  }
  if (odd_scale)
    out.notes.push_back(
        "some joints carry a non-unit or mirroring scale; positions keep it, "
        "rotations drop it");
  return out;
}

}  // namespace

glm::dmat3 axisConversionToYUp(int up_axis, int up_sign, int front_axis, int front_sign,
                               int coord_axis, int coord_sign) {
  auto valid = [](int a) { return a >= 0 && a <= 2; };
  if (!valid(up_axis) || !valid(front_axis) || !valid(coord_axis) || up_axis == front_axis ||
      up_axis == coord_axis || front_axis == coord_axis)
    return glm::dmat3(1.0);
  // Rows of the conversion: new X = coord axis, new Y = up axis, new Z = front axis.
  glm::dmat3 m(0.0);
  m[coord_axis][0] = coord_sign < 0 ? -1.0 : 1.0;
  m[up_axis][1] = up_sign < 0 ? -1.0 : 1.0;
  m[front_axis][2] = front_sign < 0 ? -1.0 : 1.0;
  return m;
}

RawClip importAssimpFileHere(const std::string& path, const std::string& take) {
  Assimp::Importer importer;
  const aiScene* scene = readScene(importer, path);
  if (scene->mNumAnimations == 0)
    throw InputError(path + ": " + fileName(path) +
                     " has no animation (no take); it holds at most "
                     "a skeleton or a mesh. Export the motion with its animation take, or use "
                     "`mmcook inspect-source` to see what the file holds");
  const unsigned index = chooseTake(*scene, path, take);
  const aiAnimation& anim = *scene->mAnimations[index];
  const SceneConventions conv = readConventions(*scene, path);
  const NodeTable table = flattenNodes(scene->mRootNode);
  std::vector<std::string> notes;
  const JointSelection sel = jointsForAnimations(*scene, table, notes);
  if (sel.joint_nodes.empty())
    throw InputError(path + ": take '" + takeName(*scene, index) +
                     "' animates no node of the scene; re-export it with its skeleton");
  ImportedTake imported = buildClip(table, conv, sel, &anim, path, true);
  imported.clip.take = takeName(*scene, index);
  for (const auto& n : sel.notes) spdlog::debug("{}: {}", path, n);
  for (const auto& n : imported.notes) spdlog::debug("{}: {}", path, n);
  // Warnings go with the clip: the cook reports them (and a cached part keeps them).
  for (const auto& n : notes)
    imported.clip.warnings.push_back({"channels-ignored", path + ": " + n, path, 0});
  for (const auto& n : imported.warnings)
    imported.clip.warnings.push_back({"unit-scale-ignored", path + ": " + n, path, 0});
  return std::move(imported.clip);
}

SourceInfo inspectAssimpFileHere(const std::string& path) {
  Assimp::Importer importer;
  const aiScene* scene = readScene(importer, path);
  const SceneConventions conv = readConventions(*scene, path);
  const NodeTable table = flattenNodes(scene->mRootNode);
  SourceInfo info;
  info.path = path;
  std::string ext = lowerExtension(path);
  for (char& c : ext) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  info.format = ext.empty() ? "unknown" : ext.substr(1);
  info.notes = conv.notes;
  for (unsigned i = 0; i < scene->mNumAnimations; ++i) {
    const TakeTiming t = takeTiming(*scene->mAnimations[i], conv.frame_rate,
                                    path + ": take '" + takeName(*scene, i) + "'");
    info.takes.push_back(
        {takeName(*scene, i), t.frame_rate, t.frame_count, (t.frame_count - 1) / t.frame_rate});
  }
  std::vector<std::string> notes;
  const aiAnimation* first = scene->mNumAnimations ? scene->mAnimations[0] : nullptr;
  const JointSelection sel =
      first ? jointsForAnimations(*scene, table, notes) : jointsWithoutAnimation(*scene, table);
  info.notes.insert(info.notes.end(), sel.notes.begin(), sel.notes.end());
  info.notes.insert(info.notes.end(), notes.begin(), notes.end());
  if (sel.joint_nodes.empty()) {
    info.notes.push_back(first ? "no skeleton: the first take animates no node"
                               : "no skeleton: no animation and no skinned mesh");
    return info;
  }
  if (!first)
    info.notes.push_back("no animation: the skeleton is the skinned mesh's, in its bind pose");
  ImportedTake imported = buildClip(table, conv, sel, first, path, false);
  info.skeleton = std::move(imported.clip.skeleton);
  info.declared_unit_scale = imported.clip.declared_unit_scale;
  info.notes.insert(info.notes.end(), imported.notes.begin(), imported.notes.end());
  info.notes.insert(info.notes.end(), imported.warnings.begin(), imported.warnings.end());
  return info;
}

}  // namespace mmdb::cook
