#include "core/input_file.h"

#include "core/errors.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace mmdb::cook {
namespace {

const char* typeProblem(mode_t mode) {
  if (S_ISREG(mode)) return nullptr;
  if (S_ISDIR(mode)) return "not a regular file (a folder)";
  if (S_ISFIFO(mode)) return "not a regular file (a named pipe, FIFO)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "not a regular file (a device)";
  if (S_ISSOCK(mode)) return "not a regular file (a socket)";
  return "not a regular file";
}

std::string statProblem(int error) {
  switch (error) {
    case ELOOP:
      return "a loop of symbolic links (too many levels of symbolic links)";
    default:
      return std::strerror(error);
  }
}

}  // namespace

std::string regularFileProblem(const std::string& path, bool* missing) {
  if (missing) *missing = false;
  if (path.empty()) return "the path is empty";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int error = errno;
    if (missing) *missing = error == ENOENT;
    return statProblem(error);
  }
  const char* problem = typeProblem(st.st_mode);
  return problem ? problem : "";
}

void requireRegularFile(const std::string& path, const std::string& what_to_do) {
  const std::string problem = regularFileProblem(path);
  if (!problem.empty()) throw InputError(path + ": cannot open: " + problem + "; " + what_to_do);
}

void checkOutputPath(const std::string& output, const std::vector<std::string>& inputs,
                     const std::string& option) {
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0) return;  // does not exist (yet): nothing to destroy
  if (S_ISDIR(out.st_mode)) return;               // checkWritable (database_writer.h) says so
  if (const char* problem = typeProblem(out.st_mode))
    throw InputError(output + ": cannot write " +
                     (option == "-o" ? std::string("the database") : option + "'s file") +
                     " there: " + problem +
                     ", which the output would replace; choose a regular "
                     "file with " +
                     option);
  for (const std::string& input : inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw InputError(output + ": the output is the input '" + input + "' (the same file), " +
                       "which " +
                       (option == "-o" ? std::string("the database") : option + "'s file") +
                       " would overwrite; choose another output path with " + option);
  }
}

}  // namespace mmdb::cook
