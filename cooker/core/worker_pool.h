// Threads kept for the whole process, which parallelFor hands its work to.
//
// A cook runs a hundred or so parallelFors, many of them a millisecond or less (each trial coding
// of a track in the pose coding's tightening rounds is one). A thread started for each one costs
// about 50 us, and on a virtual machine an idle processor takes longer still to start running it:
// measured, a 0.8 ms trial on two threads took as long as on one. The pool's threads wait for the
// next piece of work spinning for a moment before they sleep, so that back-to-back parallelFors
// find them running.
#pragma once

namespace mmdb::cook {

// Runs body(arg) on the calling thread and on up to `helpers` of the pool's threads at once, and
// returns once every call has returned. Each call must take its share of the work from state they
// share (an atomic index), so that the work is done whichever of the helpers join: those still
// waiting when the caller's own call returns are not started. False, with nothing run, when the
// pool is running another body (a parallelFor inside a parallelFor's work, or on another thread):
// the caller then starts threads of its own. `body` must not throw.
bool runOnWorkerPool(int helpers, void (*body)(void*), void* arg);

}  // namespace mmdb::cook
