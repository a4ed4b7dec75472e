#include "mixtd/search/Metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "mixtd/support/Error.h"

namespace mixtd::search {

namespace {

// Average ranks (ties share the mean of their positions).
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double mean = 0.5 * static_cast<double>(i + j) + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = mean;
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

// τ-b over all pairs: O(n²), fine for the hundreds of designs evaluated.
double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  double concordant = 0, discordant = 0, ties_x = 0, ties_y = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0 && dy == 0) continue;
      if (dx == 0) {
        ++ties_x;
      } else if (dy == 0) {
        ++ties_y;
      } else if ((dx > 0) == (dy > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  const double d = std::sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y));
  return d > 0 ? (concordant - discordant) / d : 0.0;
}

}  // namespace

Accuracy accuracy(const std::vector<double>& p, const std::vector<double>& a) {
  require(p.size() == a.size(),
          "accuracy: " + std::to_string(p.size()) + " predictions for " + std::to_string(a.size()) + " measurements");
  require(a.size() >= 2, "accuracy: at least 2 designs are needed, got " + std::to_string(a.size()));
  Accuracy r;
  double sq = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    require(a[i] > 0 && std::isfinite(a[i]) && std::isfinite(p[i]),
            "accuracy: design " + std::to_string(i) + " has measured " + std::to_string(a[i]) + ", predicted " +
                std::to_string(p[i]) + " (need finite values, measured > 0)");
    const double e = (p[i] - a[i]) / a[i];
    r.mape += std::abs(e);
    sq += e * e;
    r.within5 += std::abs(e) <= 0.05 ? 1 : 0;
    r.within10 += std::abs(e) <= 0.10 ? 1 : 0;
  }
  const double n = static_cast<double>(a.size());
  r.mape /= n;
  r.rmspe = std::sqrt(sq / n);
  r.within5 /= n;
  r.within10 /= n;
  r.kendall = kendall_tau_b(p, a);
  r.spearman = pearson(ranks(p), ranks(a));
  return r;
}

}  // namespace mixtd::search
