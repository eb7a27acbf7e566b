// The Vulkan device the motion-matching passes run on: either the engine's own (wrap) or a
// headless one made here for tools and tests (createHeadless). C++17.
#pragma once

#include "mmdb/result.h"

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

namespace mmdb::gpu {

// Severity of a validation-layer message.
enum class MessageSeverity { Verbose, Info, Warning, Error };
// Receives validation messages; `user` is ContextOptions::message_user.
using MessageCallback = void (*)(MessageSeverity severity, const char* message, void* user);

struct ContextOptions {
  // Which device: a substring of its name ("llvmpipe", "H200") or its index in enumeration order.
  // Empty: the environment variable MMDB_VK_DEVICE, else the best type
  // (discrete > integrated > virtual > CPU).
  std::string device;
  bool validation = false;               // enable VK_LAYER_KHRONOS_validation
  MessageCallback on_message = nullptr;  // validation messages (warnings and errors) go here
  void* message_user = nullptr;          // passed to on_message
};

// Device facts the passes and the benchmarks need.
struct DeviceInfo {
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t subgroup_size = 0;
  bool subgroup_arithmetic = false;  // subgroup min in compute shaders
  float timestamp_period_ns = 0;     // 0: no timestamps on the queue
  uint64_t device_local_bytes = 0;
};

class Context {
 public:
  // A headless instance and device with one compute queue. DeviceError when no Vulkan device
  // exists, when the requested one is not found, or when validation is requested but the layer
  // is not installed.
  static Result<std::unique_ptr<Context>> createHeadless(const ContextOptions& options = {});

  // Borrow an engine's objects; the Context never destroys them. The queue must support compute.
  // The Context submits to that queue only in submitAndWait() (uploads at creation, reads and
  // writes of GPU state, stepAndWait): the engine must not use the queue from another thread
  // meanwhile. A frame's step() only records into the engine's command buffer.
  static std::unique_ptr<Context> wrap(VkInstance instance, VkPhysicalDevice physical_device,
                                       VkDevice device, VkQueue queue, uint32_t queue_family);

  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physicalDevice() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queueFamily() const { return family_; }
  const DeviceInfo& info() const { return info_; }

  // Validation messages of warning or error severity seen so far (headless contexts).
  uint32_t validationMessageCount() const { return message_count_; }

  // Records commands with `record(cmd, user)` into a one-time command buffer, submits it and
  // waits. DeviceError naming the failed call and its VkResult.
  using RecordFunction = void (*)(VkCommandBuffer cmd, void* user);
  Status submitAndWait(RecordFunction record, void* user) const;
  // The same with any callable taking the command buffer (a lambda), called before this returns.
  template <class Record>
  Status submitAndWait(Record&& record) const {
    using Callable = std::remove_reference_t<Record>;
    return submitAndWait(
        [](VkCommandBuffer cmd, void* user) { (*static_cast<Callable*>(user))(cmd); },
        const_cast<void*>(static_cast<const void*>(&record)));
  }

  // Index of a memory type with the properties, or UINT32_MAX.
  uint32_t memoryType(uint32_t type_bits, VkMemoryPropertyFlags properties) const;

 private:
  Context() = default;
  void queryInfo();
  static VKAPI_ATTR VkBool32 VKAPI_CALL onDebugMessage(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                       VkDebugUtilsMessageTypeFlagsEXT,
                                                       const VkDebugUtilsMessengerCallbackDataEXT*,
                                                       void*);

  bool owned_ = false;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  MessageCallback on_message_ = nullptr;
  void* message_user_ = nullptr;
  uint32_t message_count_ = 0;
};

}  // namespace mmdb::gpu
