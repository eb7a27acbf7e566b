// Errors a user can cause carry what, where and what to do; mmcook maps them to exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace mmdb::cook {

// Bad input: a file, a manifest, a joint. mmcook exits with 1. One made at a line of a file (a
// manifest's, a source's) keeps the place apart from the message, so that mmcook prints it as a
// compiler does ("loco.toml:7: error: ..."); its what() is "FILE:LINE: message" either way.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  InputError(const std::string& file, int line, const std::string& message)
      : std::runtime_error(file + ":" + std::to_string(line) + ": " + message),
        file_(file),
        line_(line),
        message_at_(file.size() + std::to_string(line).size() + 3) {}

  bool located() const { return !file_.empty(); }
  const std::string& file() const { return file_; }  // "" when it names no line of a file
  int line() const { return line_; }                 // from 1, or 0
  const char* message() const { return what() + message_at_; }  // what() after the place

 private:
  std::string file_;
  int line_ = 0;
  size_t message_at_ = 0;
};

// Bad usage of the command line. mmcook exits with 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// kExitChanged: `mmcook diff --fail-on-change` found the two files differ, or `--fail-on` one of
// B's motion measures over its threshold.
enum ExitCode : int {
  kExitOk = 0,
  kExitBadInput = 1,
  kExitUsage = 2,
  kExitInternal = 3,
  kExitChanged = 4
};

}  // namespace mmdb::cook
