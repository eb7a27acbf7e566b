#include "mmdb/gpu/context.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if MMDB_KEEP_VULKAN_LIBRARIES_LOADED
#include <dlfcn.h>
#include <link.h>
#endif

namespace mmdb::gpu {
namespace {

const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

int typeRank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

#if MMDB_KEEP_VULKAN_LIBRARIES_LOADED
// Sanitizer builds only. The loader unloads driver and layer libraries when the instance is
// destroyed; LeakSanitizer checks at exit, later. A block such a library still referenced from its
// globals then reads as a direct leak whose frames lie in no loaded module, so no suppression by
// library name can match it (Mesa's overlay and nullhw layers do this). Marking every library
// loaded now as never-unloaded keeps its globals and name until exit: its blocks stay reachable,
// and its own leaks match the suppressions by name. Leaks of ours are reported as before.
void keepLoadedLibrariesUntilExit() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name && info->dlpi_name[0])
          static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
        return 0;
      },
      &paths);
  for (const std::string& path : paths) {  // outside the iteration, which holds the loader's lock
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
      dlclose(handle);
  }
}
#else
void keepLoadedLibrariesUntilExit() {}
#endif

bool hasLayer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const auto& layer : layers) {
    if (std::strcmp(layer.layerName, name) == 0) return true;
  }
  return false;
}

Error vkError(const char* what, VkResult result) {
  return Error::format(ErrorCode::DeviceError, "%s failed (VkResult %d)", what,
                       static_cast<int>(result));
}

// Picks by name substring or index when `wanted` is set, else by type rank.
Result<VkPhysicalDevice> pickDevice(VkInstance instance, const std::string& wanted) {
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance, &count, devices.data());
  if (devices.empty()) {
    return Error(
        ErrorCode::DeviceError,
        "no Vulkan device found (install a driver, e.g. mesa-vulkan-drivers for lavapipe)");
  }
  std::string names;
  VkPhysicalDevice best = VK_NULL_HANDLE;
  int best_rank = 99;
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(devices[i], &p);
    names += (names.empty() ? "" : ", ") + std::to_string(i) + ": " + p.deviceName;
    if (!wanted.empty()) {
      bool is_index = wanted.find_first_not_of("0123456789") == std::string::npos;
      if ((is_index && std::stoul(wanted) == i) ||
          (!is_index && std::strstr(p.deviceName, wanted.c_str()))) {
        return devices[i];
      }
    } else if (typeRank(p.deviceType) < best_rank) {
      best_rank = typeRank(p.deviceType);
      best = devices[i];
    }
  }
  if (!wanted.empty()) {
    return Error::format(ErrorCode::DeviceError, "no Vulkan device matches '%s' (devices: %s)",
                         wanted.c_str(), names.c_str());
  }
  return best;
}

}  // namespace

VKAPI_ATTR VkBool32 VKAPI_CALL Context::onDebugMessage(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* self = static_cast<Context*>(user);
  MessageSeverity s = MessageSeverity::Verbose;
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
    s = MessageSeverity::Error;
  else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
    s = MessageSeverity::Warning;
  else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT)
    s = MessageSeverity::Info;
  if (s == MessageSeverity::Warning || s == MessageSeverity::Error) ++self->message_count_;
  if (self->on_message_) self->on_message_(s, data->pMessage, self->message_user_);
  return VK_FALSE;
}

Result<std::unique_ptr<Context>> Context::createHeadless(const ContextOptions& options) {
  std::unique_ptr<Context> ctx(new Context());
  ctx->owned_ = true;
  ctx->on_message_ = options.on_message;
  ctx->message_user_ = options.message_user;

  std::vector<const char*> layers, extensions;
  if (options.validation) {
    if (!hasLayer(kValidationLayer)) {
      return Error(ErrorCode::DeviceError,
                   "validation requested but VK_LAYER_KHRONOS_validation is not installed (Debian: "
                   "vulkan-validationlayers)");
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "mmdb";
  app.apiVersion = VK_API_VERSION_1_1;
  VkDebugUtilsMessengerCreateInfoEXT messenger{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = &Context::onDebugMessage;
  messenger.pUserData = ctx.get();
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pNext = options.validation ? &messenger : nullptr;
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkCreateInstance(&ici, nullptr, &ctx->instance_);
  if (r != VK_SUCCESS)
    return vkError("vkCreateInstance (is a Vulkan loader and driver installed?)", r);
  keepLoadedLibrariesUntilExit();  // the layers and drivers are loaded now
  if (options.validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(ctx->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create) create(ctx->instance_, &messenger, nullptr, &ctx->messenger_);
  }

  std::string wanted = options.device;
  if (wanted.empty()) {
    if (const char* env = std::getenv("MMDB_VK_DEVICE")) wanted = env;
  }
  auto picked = pickDevice(ctx->instance_, wanted);
  if (!picked) return picked.error();
  ctx->physical_ = picked.value();

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_, &family_count, families.data());
  ctx->family_ = UINT32_MAX;
  for (uint32_t i = 0; i < family_count && ctx->family_ == UINT32_MAX; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) ctx->family_ = i;
  }
  if (ctx->family_ == UINT32_MAX)
    return Error(ErrorCode::DeviceError, "the Vulkan device has no compute queue");

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = ctx->family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  r = vkCreateDevice(ctx->physical_, &dci, nullptr, &ctx->device_);
  if (r != VK_SUCCESS) return vkError("vkCreateDevice", r);
  keepLoadedLibrariesUntilExit();  // and whatever the driver loaded for the device
  vkGetDeviceQueue(ctx->device_, ctx->family_, 0, &ctx->queue_);
  ctx->queryInfo();
  return ctx;
}

std::unique_ptr<Context> Context::wrap(VkInstance instance, VkPhysicalDevice physical_device,
                                       VkDevice device, VkQueue queue, uint32_t queue_family) {
  std::unique_ptr<Context> ctx(new Context());
  ctx->instance_ = instance;
  ctx->physical_ = physical_device;
  ctx->device_ = device;
  ctx->queue_ = queue;
  ctx->family_ = queue_family;
  ctx->queryInfo();
  return ctx;
}

void Context::queryInfo() {
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(physical_, &props);
  info_.name = props.properties.deviceName;
  info_.type = props.properties.deviceType;
  info_.subgroup_size = subgroup.subgroupSize;
  info_.subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                              (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                              (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, families.data());
  if (family_ < family_count && families[family_].timestampValidBits > 0) {
    info_.timestamp_period_ns = props.properties.limits.timestampPeriod;
  }
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory);
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info_.device_local_bytes += memory.memoryHeaps[i].size;
  }

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags =
      VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pci.queueFamilyIndex = family_;
  vkCreateCommandPool(device_, &pci, nullptr, &pool_);
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  vkCreateFence(device_, &fci, nullptr, &fence_);
}

Context::~Context() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (fence_) vkDestroyFence(device_, fence_, nullptr);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
  }
  if (!owned_) return;
  if (device_) vkDestroyDevice(device_, nullptr);
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

Status Context::submitAndWait(RecordFunction record, void* user) const {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkResult r = vkAllocateCommandBuffers(device_, &cai, &cmd);
  if (r != VK_SUCCESS) return vkError("vkAllocateCommandBuffers", r);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cmd, &begin);
  record(cmd, user);
  vkEndCommandBuffer(cmd);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  r = vkQueueSubmit(queue_, 1, &submit, fence_);
  const char* failed = r == VK_SUCCESS ? nullptr : "vkQueueSubmit";
  if (r == VK_SUCCESS) {
    r = vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS) failed = "vkWaitForFences";
  }
  vkResetFences(device_, 1, &fence_);
  vkFreeCommandBuffers(device_, pool_, 1, &cmd);
  return failed ? vkError(failed, r) : Status();
}

uint32_t Context::memoryType(uint32_t type_bits, VkMemoryPropertyFlags properties) const {
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory);
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & properties) == properties)
      return i;
  }
  return UINT32_MAX;
}

}  // namespace mmdb::gpu
