#include "cook/normalize.h"

#include "core/errors.h"
#include "core/parallel_for.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mmdb::cook {

NormalizedFeatures normalizeFeatureRows(std::vector<float> rows, int columns, int stride,
                                        std::vector<CookedFeatureBlock>& blocks, int jobs) {
  if (stride < columns) throw std::invalid_argument("normalizeFeatureRows: stride below columns");
  const size_t c = static_cast<size_t>(columns), s = static_cast<size_t>(stride);
  const size_t frames = s ? rows.size() / s : 0;
  if (frames == 0 || c == 0) throw InputError("the database has no frames to normalize");
  jobs = std::max(1, jobs);

  // Each column's sums run over the frames in order, whichever thread has the column (and in its
  // own sums, not in a cache line that another thread writes too).
  std::vector<double> mean(c, 0.0), var(c, 0.0);
  const int column_parts = std::min(jobs, columns);
  parallelFor(0, column_parts, column_parts, [&](int part) {
    const auto [first, last] = partOf(c, column_parts, part);
    const size_t n = last - first;
    std::vector<double> m(n, 0.0), v(n, 0.0);
    for (size_t f = 0; f < frames; ++f) {
      const float* row = rows.data() + f * s + first;
      for (size_t k = 0; k < n; ++k) m[k] += row[k];
    }
    for (size_t k = 0; k < n; ++k) m[k] /= static_cast<double>(frames);
    for (size_t f = 0; f < frames; ++f) {
      const float* row = rows.data() + f * s + first;
      for (size_t k = 0; k < n; ++k) {
        const double d = row[k] - m[k];
        v[k] += d * d;
      }
    }
    std::copy(m.begin(), m.end(), mean.begin() + std::ptrdiff_t(first));
    std::copy(v.begin(), v.end(), var.begin() + std::ptrdiff_t(first));
  });

  NormalizedFeatures out;
  out.offset.assign(c, 0.0f);
  out.scale.assign(c, 1.0f);
  for (size_t k = 0; k < c; ++k) out.offset[k] = static_cast<float>(mean[k]);
  for (auto& b : blocks) {
    if (!(b.weight > 0))
      throw InputError("feature block " + b.name + " has weight " + std::to_string(b.weight) +
                       "; weights must be above 0 (use a small weight to make a block matter "
                       "little)");
    double std_sum = 0;
    for (int k = b.first_column; k < b.first_column + b.width; ++k)
      std_sum += std::sqrt(var[k] / static_cast<double>(frames));
    const double block_std = std_sum / b.width;
    if (!(block_std > 1e-12))
      throw InputError("feature block " + b.name + " never changes over the " +
                       std::to_string(frames) +
                       " frames of the database (zero spread), so it cannot be normalized: add "
                       "clips where it varies (e.g. where the character moves its feet and turns)");
    b.std = static_cast<float>(block_std);
    const float scale = static_cast<float>(block_std / b.weight);
    for (int k = b.first_column; k < b.first_column + b.width; ++k) out.scale[k] = scale;
  }

  // Row by row, in place: each row is its own.
  const int frame_parts = static_cast<int>(std::min<size_t>(size_t(jobs), frames));
  parallelFor(0, frame_parts, frame_parts, [&](int part) {
    const auto [first, last] = partOf(frames, frame_parts, part);
    for (size_t f = first; f < last; ++f) {
      float* row = rows.data() + f * s;
      for (size_t k = 0; k < c; ++k) row[k] = (row[k] - out.offset[k]) / out.scale[k];
      std::fill(row + c, row + s, 0.0f);
    }
  });
  out.features = std::move(rows);
  return out;
}

NormalizedFeatures normalizeFeatures(std::vector<float> raw, int columns, int stride,
                                     std::vector<CookedFeatureBlock>& blocks) {
  if (stride < columns) throw std::invalid_argument("normalizeFeatures: stride below columns");
  const size_t c = static_cast<size_t>(columns), s = static_cast<size_t>(stride);
  const size_t frames = c ? raw.size() / c : 0;
  if (frames == 0) throw InputError("the database has no frames to normalize");
  // In place, from the last value back: frame f's row (from f * s) ends past its raw values
  // (from f * c), so each value is moved where no raw value still unread lies.
  raw.resize(frames * s);
  for (size_t f = frames; f-- > 0;) {
    for (size_t k = s; k-- > c;) raw[f * s + k] = 0.0f;
    for (size_t k = c; k-- > 0;) raw[f * s + k] = raw[f * c + k];
  }
  return normalizeFeatureRows(std::move(raw), columns, stride, blocks, 1);
}

}  // namespace mmdb::cook
