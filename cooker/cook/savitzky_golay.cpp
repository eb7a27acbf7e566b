#include "cook/savitzky_golay.h"

#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

namespace mmdb::cook {
namespace {

// Weights w such that sum_k w[k] * y[k] is the least-squares polynomial of degree `order` through
// (k - at, y[k]), k = 0..window-1, evaluated at 0: the first row of (A^T A)^-1 A^T.
std::vector<double> fitWeights(int window, int order, int at) {
  const int m = order + 1;
  const double half = 0.5 * (window - 1);  // abscissae scaled into [-2, 2] for conditioning
  std::vector<double> x(window);
  for (int k = 0; k < window; ++k) x[k] = (k - at) / half;
  // Normal matrix N = A^T A, augmented with the identity to invert it by Gauss-Jordan.
  // Power sums: N[r][c] = sum_k x_k^(r + c).
  std::vector<double> power_sum(2 * m - 1, 0.0);
  for (int k = 0; k < window; ++k) {
    double p = 1;
    for (int e = 0; e < 2 * m - 1; ++e, p *= x[k]) power_sum[e] += p;
  }
  std::vector<std::vector<double>> n(m, std::vector<double>(2 * m, 0.0));
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < m; ++c) n[r][c] = power_sum[r + c];
    n[r][m + r] = 1;
  }
  for (int c = 0; c < m; ++c) {
    int pivot = c;
    for (int r = c + 1; r < m; ++r)
      if (std::abs(n[r][c]) > std::abs(n[pivot][c])) pivot = r;
    std::swap(n[c], n[pivot]);
    const double d = n[c][c];
    for (double& v : n[c]) v /= d;
    for (int r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = n[r][c];
      for (int k = 0; k < 2 * m; ++k) n[r][k] -= f * n[c][k];
    }
  }
  // Row 0 of N^-1 times A^T.
  std::vector<double> w(window);
  for (int k = 0; k < window; ++k) {
    double s = 0, xp = 1;
    for (int c = 0; c < m; ++c, xp *= x[k]) s += n[0][m + c] * xp;
    w[k] = s;
  }
  return w;
}

}  // namespace

int oddWindowFrames(double seconds, double rate) {
  // Ties go to the smaller window, whose half-width is then the same time as at 60 Hz (61 frames
  // at 60 Hz -> 121 at 120 Hz); the epsilon absorbs rounding in seconds * rate.
  const double half = (seconds * rate - 1) / 2;
  const int w = 2 * static_cast<int>(std::ceil(half - 0.5 - 1e-9)) + 1;
  return w < 1 ? 1 : w;
}

SavitzkyGolayFilter::SavitzkyGolayFilter(int window, int order) : window_(window), order_(order) {
  if (window < 1 || window % 2 == 0 || order < 0 || order >= window)
    throw std::invalid_argument("Savitzky-Golay window must be odd and larger than the order");
  weights_.reserve(window);
  for (int at = 0; at < window; ++at) weights_.push_back(fitWeights(window, order, at));
}

std::vector<glm::vec3> SavitzkyGolayFilter::apply(const std::vector<glm::vec3>& values) const {
  const int n = static_cast<int>(values.size());
  if (n < window_) throw std::invalid_argument("Savitzky-Golay window longer than the signal");
  const int h = window_ / 2;
  std::vector<glm::vec3> out(n);
  for (int i = 0; i < n; ++i) {
    int start = i - h;
    if (start < 0) start = 0;
    if (start > n - window_) start = n - window_;
    const std::vector<double>& w = weights_[i - start];
    double sx = 0, sy = 0, sz = 0;
    for (int k = 0; k < window_; ++k) {
      const glm::vec3& v = values[start + k];
      sx += w[k] * v.x;
      sy += w[k] * v.y;
      sz += w[k] * v.z;
    }
    out[i] = glm::vec3(static_cast<float>(sx), static_cast<float>(sy), static_cast<float>(sz));
  }
  return out;
}

const SavitzkyGolayFilter& sharedSavitzkyGolayFilter(int window, int order) {
  thread_local std::map<std::pair<int, int>, SavitzkyGolayFilter> filters;
  auto it = filters.find({window, order});
  if (it == filters.end())
    it = filters.emplace(std::pair(window, order), SavitzkyGolayFilter(window, order)).first;
  return it->second;
}

}  // namespace mmdb::cook
