// Savitzky-Golay smoothing (docs/cook.md "Root motion"): each sample is replaced by the value at
// that sample of the least-squares polynomial fitted over a window around it. Near the ends the
// window is clamped inside the signal (it keeps its length and the polynomial is evaluated off
// centre), like scipy's savgol_filter(mode='interp') that the reference uses. Polynomials up to
// the filter's order pass through unchanged, ends included.
#pragma once

#include <glm/vec3.hpp>

#include <vector>

namespace mmdb::cook {

// Nearest odd frame count to seconds * rate (at least 1).
int oddWindowFrames(double seconds, double rate);

class SavitzkyGolayFilter {
 public:
  // window: odd, > order. Precomputes the weights for every position inside a window.
  SavitzkyGolayFilter(int window, int order);

  int window() const { return window_; }
  // Smoothed copy; `values.size()` must be >= window.
  std::vector<glm::vec3> apply(const std::vector<glm::vec3>& values) const;
  // Weights for evaluating at position `at` (0..window-1) of a window.
  const std::vector<double>& weights(int at) const { return weights_[at]; }

 private:
  int window_, order_;
  std::vector<std::vector<double>> weights_;  // [position in window][sample in window]
};

// The filter of `window` and `order`, built once per thread: a cook applies the same two to
// every clip, and building one costs more than applying it to a short clip.
const SavitzkyGolayFilter& sharedSavitzkyGolayFilter(int window, int order);

}  // namespace mmdb::cook
