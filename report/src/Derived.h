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

// The design against the undecomposed one (Headline::undecomposed): FPS and
// weight memory as ratios, accuracy as a difference. A figure is absent when
// either side of it is.
struct VersusUndecomposed {
  Num fps_ratio_analytical, fps_ratio_systemc;  // this design / undecomposed, batch 1
  Num weight_ratio;                             // undecomposed / this design: how many times smaller
  Num top1_delta_pp;                            // the final design's top-1 − the undecomposed BFP8 top-1, in points
};
// The final design's top-1: fine-tuned, or the searched design's as it is
// when the flow does not fine-tune (finetune.epochs 0).
inline Num top1_final(const Headline& h) { return h.top1_finetuned ? h.top1_finetuned : h.top1_decomposed; }
inline Num ratio(const Num& a, const Num& b) {
  if (!a || !b || !(*a > 0) || !(*b > 0)) return std::nullopt;
  return *a / *b;
}
inline Num ratio(const std::optional<std::int64_t>& a, const std::optional<std::int64_t>& b) {
  return ratio(a ? Num(static_cast<double>(*a)) : Num{}, b ? Num(static_cast<double>(*b)) : Num{});
}
inline VersusUndecomposed versus_undecomposed(const Headline& h) {
  VersusUndecomposed v;
  if (const Num final = top1_final(h); final && h.top1_bfp8) v.top1_delta_pp = *final - *h.top1_bfp8;
  if (!h.undecomposed) return v;
  const Undecomposed& u = *h.undecomposed;
  v.fps_ratio_analytical = ratio(h.fps_batch1_analytical, u.fps_batch1_analytical);
  v.fps_ratio_systemc = ratio(h.fps_batch1_systemc, u.fps_batch1_systemc);
  v.weight_ratio = ratio(u.weight_bytes, h.weight_bytes);
  return v;
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
