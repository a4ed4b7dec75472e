// The torch-free half of the search's fitness: the statistics correction
// folded into the factors, and agreement with the teacher's soft outputs.
#include <algorithm>
#include <cmath>

#include "mixtd/nn/Model.h"
#include "mixtd/support/Error.h"

namespace mixtd::nn {

StatsCorrection parse_stats_correction(const std::string& s) {
  if (s == "none") return StatsCorrection::None;
  if (s == "bias") return StatsCorrection::Bias;
  if (s == "scale") return StatsCorrection::Scale;
  throw Error("statistics correction '" + s + "': legal values are none, bias, scale");
}

std::string to_string(StatsCorrection c) {
  switch (c) {
    case StatsCorrection::None:
      return "none";
    case StatsCorrection::Bias:
      return "bias";
    case StatsCorrection::Scale:
      return "scale";
  }
  return "none";
}

Fitness parse_fitness(const std::string& s) {
  if (s == "top1") return Fitness::Top1;
  if (s == "teacher") return Fitness::Teacher;
  throw Error("fitness '" + s + "': legal values are top1, teacher");
}

std::string to_string(Fitness f) { return f == Fitness::Top1 ? "top1" : "teacher"; }

std::int64_t largest_evaluation_set(std::int64_t search_size, const OracleOptions& o) {
  const std::int64_t reserved =
      std::max(o.calibration, o.correction == StatsCorrection::None ? std::int64_t{0} : o.correction_images);
  return search_size - reserved;
}

void apply_corrections(numerics::Decompositions& decomps, const Corrections& corrections) {
  for (const auto& [name, c] : corrections) {
    auto it = decomps.find(name);
    require(it != decomps.end(), "statistics correction for layer '" + name + "', which is not decomposed");
    td::DecomposedLayer& d = it->second;
    const std::int64_t n = d.geometry.n, g1 = d.geometry.tau.g1;
    require(static_cast<std::int64_t>(c.scale.size()) == n && static_cast<std::int64_t>(c.shift.size()) == n,
            "statistics correction for layer '" + name + "': " + std::to_string(c.scale.size()) +
                " channels, the layer has " + std::to_string(n));
    // Output channel ch is row ch / g1 of the last stage of every chunk (ch mod g1, ·).
    for (auto& chunk : d.chunks) {
      td::StageWeights& last = chunk.stages.back();
      const std::int64_t rows = last.shape.out_ch;
      const std::size_t per = last.weight.size() / static_cast<std::size_t>(rows);
      for (std::int64_t j = 0; j < rows; ++j) {
        const double s = c.scale[static_cast<std::size_t>(j * g1 + chunk.a)];
        for (std::size_t k = 0; k < per; ++k) {
          float& w = last.weight[static_cast<std::size_t>(j) * per + k];
          w = static_cast<float>(w * s);
        }
      }
    }
    if (d.bias.empty()) d.bias.assign(static_cast<std::size_t>(n), 0.0f);
    for (std::size_t ch = 0; ch < d.bias.size(); ++ch)
      d.bias[ch] = static_cast<float>(c.scale[ch] * d.bias[ch] + c.shift[ch]);
  }
}

double teacher_agreement(const numerics::FloatTensor& student, const numerics::FloatTensor& teacher) {
  require(student.n == teacher.n && student.per_image() == teacher.per_image() && student.n > 0,
          "teacher agreement: " + std::to_string(student.n) + "x" + std::to_string(student.per_image()) +
              " student logits against " + std::to_string(teacher.n) + "x" + std::to_string(teacher.per_image()) +
              " teacher logits");
  const std::int64_t k = student.per_image();
  auto log_softmax = [k](const float* z, std::vector<double>& out) {
    double m = z[0];
    for (std::int64_t c = 1; c < k; ++c) m = std::max(m, static_cast<double>(z[c]));
    double sum = 0;
    for (std::int64_t c = 0; c < k; ++c) sum += std::exp(z[c] - m);
    const double lse = m + std::log(sum);
    out.resize(static_cast<std::size_t>(k));
    for (std::int64_t c = 0; c < k; ++c) out[static_cast<std::size_t>(c)] = z[c] - lse;
  };
  std::vector<double> ls, lt;
  double kl = 0;
  for (std::int64_t i = 0; i < student.n; ++i) {
    log_softmax(student.data.data() + i * k, ls);
    log_softmax(teacher.data.data() + i * k, lt);
    for (std::size_t c = 0; c < ls.size(); ++c) kl += std::exp(lt[c]) * (lt[c] - ls[c]);
  }
  return std::exp(-kl / static_cast<double>(student.n));
}

}  // namespace mixtd::nn
