// The figures the report derives from the data (utilisation, errors,
// summaries), computed here once so that report.json and report.html show
// the same values.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>

#include "mixtd/report/FlowReport.h"

namespace mixtd::report::derived {

// The headline's resources in the report's order, with their JSON key and label.
struct ResourceRef {
  const char* key;
  const char* label;
  const std::optional<ResourceUse>* use;
};
inline std::array<ResourceRef, 5> resources(const Headline& h) {
  return {{{"dsp", "DSP", &h.dsp},
           {"bram18", "BRAM18", &h.bram18},
           {"uram", "URAM", &h.uram},
           {"lut", "LUT", &h.lut},
           {"ff", "FF", &h.ff}}};
}

// used / available, in percent.
inline Num utilisation_pct(const ResourceUse& r) {
  if (!r.available || !(*r.available > 0)) return std::nullopt;
  return 100 * r.used / *r.available;
}

// used / (available · budget), in percent: 100 is the whole budget.
inline Num budget_pct(double used, const Num& available, const Num& budget) {
  if (!available || !budget || !(*available * *budget > 0)) return std::nullopt;
  return 100 * used / (*available * *budget);
}

// The cycles per frame the FPS target allows (clock / target): the interval
// the pipeline needs for peak FPS; at batch 1 the whole latency must fit.
inline Num target_interval_cycles(const Header& h) {
  if (!h.clock_mhz || !h.fps_target || !(*h.fps_target > 0)) return std::nullopt;
  return *h.clock_mhz * 1e6 / *h.fps_target;
}

// (a − ref) / ref, in percent.
inline Num deviation_pct(const Num& a, const Num& ref) {
  if (!a || !ref || *ref == 0) return std::nullopt;
  return 100 * (*a - *ref) / *ref;
}

struct PredictorSummary {
  std::int64_t pairs = 0, within_10pct = 0;
  Num mean_abs_error_pct;  // mean |predicted − SystemC| / SystemC
};
inline PredictorSummary summarise(const Predictor& p) {
  PredictorSummary s;
  double err = 0;
  for (const auto& q : p.pairs) {
    if (!(q.systemc > 0) || !std::isfinite(q.predicted)) continue;
    const double e = std::fabs(q.predicted - q.systemc) / q.systemc;
    ++s.pairs, err += e, s.within_10pct += e <= 0.10;
  }
  if (s.pairs > 0) s.mean_abs_error_pct = 100 * err / static_cast<double>(s.pairs);
  return s;
}

struct SearchSummary {
  std::int64_t points = 0, feasible = 0;
  std::optional<SearchPoint> best;  // the most accurate feasible point (then the fastest)
};
inline SearchSummary summarise(const Search& se) {
  SearchSummary s;
  for (const auto& p : se.points) {
    ++s.points;
    if (!p.feasible) continue;
    ++s.feasible;
    if (!s.best || p.accuracy > s.best->accuracy || (p.accuracy == s.best->accuracy && p.fps > s.best->fps)) s.best = p;
  }
  return s;
}

inline std::int64_t total_bytes(const Package& p) {
  std::int64_t b = 0;
  for (const auto& f : p.files) b += f.bytes;
  return b;
}

}  // namespace mixtd::report::derived
