// The Vulkan device the motion-matching passes run on: either the engine's own (wrap) or a
// headless one made here for tools and tests (createHeadless). C++17.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>

namespace mmdb::gpu {

// An error value: what failed and, where it helps, what to do.
struct Error {
  std::string message;
};

// A value or an error.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  explicit operator bool() const { return v_.index() == 0; }
  T& value() { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Severity of a validation-layer message.
enum class MessageSeverity { Verbose, Info, Warning, Error };
using MessageCallback = std::function<void(MessageSeverity, const char* message)>;

struct ContextOptions {
  // Which device: a substring of its name ("llvmpipe", "H200") or its index in enumeration order.
  // Empty: the environment variable MMDB_VK_DEVICE, else the best type
  // (discrete > integrated > virtual > CPU).
  std::string device;
  bool validation = false;            // enable VK_LAYER_KHRONOS_validation
  MessageCallback on_message;         // validation messages (warnings and errors) go here
};

// Device facts the passes and the benchmarks need.
struct DeviceInfo {
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t subgroup_size = 0;
  bool subgroup_arithmetic = false;   // subgroup min in compute shaders
  float timestamp_period_ns = 0;      // 0: no timestamps on the queue
  uint64_t device_local_bytes = 0;
};

class Context {
 public:
  // A headless instance and device with one compute queue. Fails (error value) when no Vulkan
  // device exists, when the requested one is not found, or when validation is requested but the
  // layer is not installed.
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

  // Records commands with `record` into a one-time command buffer, submits it and waits.
  VkResult submitAndWait(const std::function<void(VkCommandBuffer)>& record) const;

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
  MessageCallback on_message_;
  uint32_t message_count_ = 0;
};

}  // namespace mmdb::gpu
