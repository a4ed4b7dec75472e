// report.json: every key always present, null for what did not run, in the
// order of FlowReport.h.
#include "Derived.h"
#include "JsonWriter.h"
#include "mixtd/report/FlowReport.h"

namespace mixtd::report {

std::string to_string(StepStatus s) {
  switch (s) {
    case StepStatus::ran:
      return "ran";
    case StepStatus::skipped_unchanged:
      return "skipped-unchanged";
    case StepStatus::not_run:
      return "not-run";
    case StepStatus::failed:
      return "failed";
  }
  return "not-run";
}

namespace {

void header(JsonWriter& j, const Header& h) {
  j.begin_object();
  j.key("flow").value(h.flow);
  j.key("network").value(h.network);
  j.key("device").value(h.device);
  j.key("clock_mhz").value(h.clock_mhz);
  j.key("budget").value(h.budget);
  j.key("fps_target").value(h.fps_target);
  j.key("date").value(h.date);
  j.end_object();
}

void headline(JsonWriter& j, const Headline& h, const Header& hd) {
  j.begin_object();
  j.key("fps_batch1_analytical").value(h.fps_batch1_analytical);
  j.key("fps_peak_analytical").value(h.fps_peak_analytical);
  j.key("fps_batch1_systemc").value(h.fps_batch1_systemc);
  j.key("fps_peak_systemc").value(h.fps_peak_systemc);
  j.key("latency_cycles").value(h.latency_cycles);
  j.key("latency_ms").value(h.latency_ms);
  j.key("resources").begin_object();
  for (const auto& r : derived::resources(h)) {
    j.key(r.key);
    if (!*r.use) {
      j.null();
      continue;
    }
    const ResourceUse& u = **r.use;
    j.begin_object();
    j.key("used").value(u.used);
    j.key("available").value(u.available);
    j.key("utilisation_pct").value(derived::utilisation_pct(u));
    j.key("budget_pct").value(derived::budget_pct(u.used, u.available, hd.budget));
    j.end_object();
  }
  j.end_object();
  j.key("weight_bytes").value(h.weight_bytes);
  j.key("top1_float_pct").value(h.top1_float);
  j.key("top1_bfp8_pct").value(h.top1_bfp8);
  j.key("top1_decomposed_pct").value(h.top1_decomposed);
  j.key("top1_finetuned_pct").value(h.top1_finetuned);
  // Against the undecomposed design at the same device and budget (the
  // search's figures), every key present, null where a side is missing.
  const derived::VersusUndecomposed v = derived::versus_undecomposed(h);
  const Undecomposed u = h.undecomposed.value_or(Undecomposed{});
  j.key("versus_undecomposed").begin_object();
  j.key("undecomposed_fps_batch1_analytical").value(u.fps_batch1_analytical);
  j.key("undecomposed_fps_batch1_systemc").value(u.fps_batch1_systemc);
  j.key("undecomposed_weight_bytes").value(u.weight_bytes);
  j.key("fps_ratio_analytical").value(v.fps_ratio_analytical);
  j.key("fps_ratio_systemc").value(v.fps_ratio_systemc);
  j.key("weight_ratio").value(v.weight_ratio);
  j.key("top1_delta_pp").value(v.top1_delta_pp);
  j.end_object();
  j.end_object();
}

void layers(JsonWriter& j, const FlowReport& r) {
  j.begin_object();
  j.key("target_interval_cycles").value(derived::target_interval_cycles(r.header));
  j.key("rows").begin_array();
  for (const auto& l : r.layers) {
    j.begin_object();
    j.key("name").value(l.name);
    j.key("type").value(l.type);
    j.key("tau");
    if (l.tau) {
      j.begin_object();
      j.key("type").value(l.tau->type);
      j.key("g1").value(l.tau->g1);
      j.key("g2").value(l.tau->g2);
      j.key("rank").value(l.tau->rank);
      j.end_object();
    } else {
      j.null();
    }
    j.key("mac_ratio").value(l.mac_ratio);
    j.key("param_ratio").value(l.param_ratio);
    j.key("cycles").value(l.cycles);
    j.key("dsp").value(l.dsp);
    j.key("bram18").value(l.bram18);
    j.key("lut").value(l.lut);
    j.key("bottleneck").value(l.bottleneck);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void search(JsonWriter& j, const Search& s) {
  const derived::SearchSummary sum = derived::summarise(s);
  j.begin_object();
  j.key("oracle").value(s.oracle);
  j.key("points_evaluated").value(sum.points);
  j.key("points_feasible").value(sum.feasible);
  j.key("best_feasible");
  if (sum.best) {
    j.begin_object();
    j.key("fps").value(sum.best->fps);
    j.key("accuracy_pct").value(sum.best->accuracy);
    j.end_object();
  } else {
    j.null();
  }
  j.key("convergence").begin_array();
  for (const auto& g : s.convergence) {
    j.begin_object();
    j.key("generation").value(g.generation);
    j.key("best_accuracy_pct").value(g.best_accuracy);
    j.key("best_fps").value(g.best_fps);
    j.end_object();
  }
  j.end_array();
  j.key("points").begin_array();
  for (const auto& p : s.points) {
    j.begin_object();
    j.key("fps").value(p.fps);
    j.key("accuracy_pct").value(p.accuracy);
    j.key("feasible").value(p.feasible);
    j.end_object();
  }
  j.end_array();
  const auto marker = [&](const Marker& m) {
    j.begin_object();
    j.key("name").value(m.name);
    j.key("fps").value(m.fps);
    j.key("accuracy_pct").value(m.accuracy);
    j.end_object();
  };
  j.key("baselines").begin_array();
  for (const auto& m : s.baselines) marker(m);
  j.end_array();
  j.key("answer");
  if (s.answer)
    marker(*s.answer);
  else
    j.null();
  j.end_object();
}

void predictor(JsonWriter& j, const Predictor& p) {
  const derived::PredictorSummary sum = derived::summarise(p);
  j.begin_object();
  j.key("pairs_compared").value(sum.pairs);
  j.key("mean_abs_error_pct").value(sum.mean_abs_error_pct);
  j.key("within_10pct").value(sum.within_10pct);
  j.key("pairs").begin_array();
  for (const auto& q : p.pairs) {
    j.begin_object();
    j.key("systemc_fps").value(q.systemc);
    j.key("predicted_fps").value(q.predicted);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void agreement(JsonWriter& j, const Agreement& a) {
  j.begin_object();
  j.key("unit").value("cycles");
  j.key("rows").begin_array();
  for (const auto& r : a.rows) {
    j.begin_object();
    j.key("name").value(r.name);
    j.key("analytical").value(r.analytical);
    j.key("systemc").value(r.systemc);
    j.key("rtl").value(r.rtl);
    j.key("analytical_vs_systemc_pct").value(derived::deviation_pct(r.analytical, r.systemc));
    j.key("rtl_vs_systemc_pct").value(derived::deviation_pct(r.rtl, r.systemc));
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void package(JsonWriter& j, const Package& p) {
  j.begin_object();
  j.key("platform").value(p.platform);
  j.key("kernel_mhz").value(p.kernel_mhz);
  j.key("total_bytes").value(derived::total_bytes(p));
  j.key("files").begin_array();
  for (const auto& f : p.files) {
    j.begin_object();
    j.key("path").value(f.path);
    j.key("bytes").value(f.bytes);
    j.end_object();
  }
  j.end_array();
  j.key("slrs").begin_array();
  for (const auto& s : p.slrs) {
    j.begin_object();
    j.key("slr").value(s.slr);
    j.key("blocks").begin_array();
    for (const auto& b : s.blocks) j.value(b);
    j.end_array();
    j.key("dsp").value(s.dsp);
    j.key("bram18").value(s.bram18);
    j.key("uram").value(s.uram);
    j.key("lut").value(s.lut);
    j.end_object();
  }
  j.end_array();
  j.key("crossing_streams").begin_array();
  for (const auto& c : p.crossing_streams) j.value(c);
  j.end_array();
  j.end_object();
}

// A section, or null when it did not run.
template <class T, class F>
void section(JsonWriter& j, const char* key, const std::optional<T>& v, F&& write) {
  j.key(key);
  if (v)
    write(*v);
  else
    j.null();
}

}  // namespace

std::string to_json(const FlowReport& r) {
  JsonWriter j;
  j.begin_object();
  j.key("schema").value("mixtd-flow-report/1");
  j.key("header");
  header(j, r.header);
  section(j, "headline", r.headline, [&](const Headline& h) { headline(j, h, r.header); });
  j.key("layers");
  if (r.layers.empty())
    j.null();
  else
    layers(j, r);
  section(j, "search", r.search, [&](const Search& s) { search(j, s); });
  section(j, "predictor", r.predictor, [&](const Predictor& p) { predictor(j, p); });
  section(j, "agreement", r.agreement, [&](const Agreement& a) { agreement(j, a); });
  section(j, "package", r.package, [&](const Package& p) { package(j, p); });
  j.key("steps").begin_array();
  for (const auto& s : r.steps) {
    j.begin_object();
    j.key("name").value(s.name);
    j.key("status").value(to_string(s.status));
    j.key("wall_seconds").value(s.wall_seconds);
    j.key("summary").value(s.summary);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.take();
}

}  // namespace mixtd::report
