#include "cook/normalize.h"

#include "core/errors.h"

#include <cmath>
#include <stdexcept>

namespace mmdb::cook {

NormalizedFeatures normalizeFeatures(std::vector<float> raw, int columns, int stride,
                                     std::vector<CookedFeatureBlock>& blocks) {
  if (stride < columns) throw std::invalid_argument("normalizeFeatures: stride below columns");
  const size_t c = static_cast<size_t>(columns), s = static_cast<size_t>(stride);
  const size_t frames = c ? raw.size() / c : 0;
  if (frames == 0) throw InputError("the database has no frames to normalize");
  std::vector<double> mean(c, 0.0), var(c, 0.0);
  for (size_t f = 0; f < frames; ++f)
    for (size_t k = 0; k < c; ++k) mean[k] += raw[f * c + k];
  for (auto& m : mean) m /= static_cast<double>(frames);
  for (size_t f = 0; f < frames; ++f)
    for (size_t k = 0; k < c; ++k) {
      const double d = raw[f * c + k] - mean[k];
      var[k] += d * d;
    }

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

  // In place, from the last value back: frame f's row (from f * s) ends past its raw values
  // (from f * c), so each value is written where no raw value still unread lies.
  raw.resize(frames * s);
  for (size_t f = frames; f-- > 0;) {
    for (size_t k = s; k-- > c;) raw[f * s + k] = 0.0f;
    for (size_t k = c; k-- > 0;) raw[f * s + k] = (raw[f * c + k] - out.offset[k]) / out.scale[k];
  }
  out.features = std::move(raw);
  return out;
}

}  // namespace mmdb::cook
