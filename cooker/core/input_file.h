// Checks on the files mmcook reads and writes, made before opening them: a FIFO would block
// the open, a device would be read forever or replaced, and an output that is one of the inputs
// would destroy it.
#pragma once

#include <string>
#include <vector>

namespace mmdb::cook {

// Why `path` cannot be read as a regular file ("No such file or directory", "not a regular file
// (a named pipe, FIFO)", "a loop of symbolic links (...)", ...), or "" when it can be. Follows
// symbolic links; never opens the file. `missing` (optional) tells whether nothing is there.
std::string regularFileProblem(const std::string& path, bool* missing = nullptr);

// Throws InputError "<path>: cannot open: <problem>; <what_to_do>" unless `path` is a regular
// file.
void requireRegularFile(const std::string& path, const std::string& what_to_do);

// Refuses an output path that exists and is not a regular file or a folder (a device, a FIFO,
// a socket: renaming over it would replace it; a folder is refused when the output is written),
// and one that is the same file as any of `inputs` (same device and inode, however the paths
// are spelled: "sub/../a.bvh", symbolic and hard links).
// Throws InputError naming the output and what to do; `option` is the command-line option that
// names this output ("-o", "--report", "--depfile").
void checkOutputPath(const std::string& output, const std::vector<std::string>& inputs,
                     const std::string& option = "-o");

}  // namespace mmdb::cook
