// Proves that leak checking still covers our code in a process that used the GPU context.
// Sanitizer builds keep Vulkan's driver and layer libraries loaded until exit, so memory those
// libraries hold in their globals is not reported as a leak of an unloaded module; this probe
// checks both halves of that:
//   mmdb_gpu_leak_probe         creates and destroys a headless context: exits 0, no report,
//                               also with layers enabled that keep memory in their globals;
//   mmdb_gpu_leak_probe --leak  also loses one block of its own: LeakSanitizer must report it,
//                               naming leakOneBlock.
#include "mmdb/gpu/context.h"

#include <cstdio>
#include <cstring>

namespace {

__attribute__((noinline)) void leakOneBlock() {
  volatile char* lost = new char[100];
  lost[0] = 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool leak = argc > 1 && std::strcmp(argv[1], "--leak") == 0;
  {
    mmdb::gpu::ContextOptions options;
    options.validation = true;
    auto ctx = mmdb::gpu::Context::createHeadless(options);
    if (ctx) {
      std::printf("context on %s\n", ctx.value()->info().name.c_str());
    } else {
      std::printf("no Vulkan device: %s\n", ctx.error().message());
    }
  }
  if (leak) leakOneBlock();
  return 0;
}
