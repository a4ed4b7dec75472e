// report.html's sections after the headline: per layer, search, predictor,
// models agreement, package.
#include <cmath>

#include "Derived.h"
#include "Html.h"
#include "mixtd/report/BarsSvg.h"
#include "mixtd/report/PlotSvg.h"
#include "mixtd/report/ScatterSvg.h"

namespace mixtd::report::html {

namespace {

constexpr const char* kBlue = "#1f77b4";
constexpr const char* kRed = "#d62728";
constexpr const char* kGreen = "#2ca02c";
constexpr const char* kOrange = "#ff7f0e";

double or_nan(const Num& v) { return v ? *v : std::nan(""); }

std::string p(const std::string& label, const std::string& value) {
  return "<p>" + html_escape(label) + ": <b>" + value + "</b></p>\n";
}

// The layers' DSP, BRAM18 and LUT as % of the budget (needs the device's
// figures from the headline and the budget).
std::string layer_resources_figure(const FlowReport& r, const std::vector<std::string>& names) {
  if (!r.headline) return "";
  const Headline& h = *r.headline;
  struct Kind {
    const char* name;
    const char* colour;
    const std::optional<ResourceUse>& total;
    Num LayerRow::*field;
  };
  const Kind kinds[] = {{"DSP", kBlue, h.dsp, &LayerRow::dsp},
                        {"BRAM18", kOrange, h.bram18, &LayerRow::bram18},
                        {"LUT", kGreen, h.lut, &LayerRow::lut}};
  std::vector<BarSeries> series;
  for (const auto& k : kinds) {
    if (!k.total) continue;
    BarSeries s{k.name, k.colour, {}};
    bool any = false;
    for (const auto& l : r.layers) {
      const Num v = l.*k.field ? derived::budget_pct(*(l.*k.field), k.total->available, r.header.budget) : Num{};
      s.values.push_back(or_nan(v));
      any = any || v.has_value();
    }
    if (any) series.push_back(std::move(s));
  }
  if (series.empty()) return "";
  return figure(bars_svg("Resources per layer", names, series, {}, "% of the budget (device × budget fraction)"));
}

}  // namespace

std::string layers_section(const FlowReport& r) {
  std::string s = heading("layers", "Per layer");
  if (r.layers.empty()) return s + not_run();
  const Num target = derived::target_interval_cycles(r.header);
  // clock / target FPS: the cycles a frame may take at the target. At batch 1
  // the whole latency must fit in it, so every layer's interval is far below.
  if (target)
    s += p("clock / target FPS (cycles per frame; at batch 1 the latency must fit in it)", format_number(*target));
  std::vector<std::string> names;
  BarSeries cycles{"interval", kBlue, {}};
  for (const auto& l : r.layers) {
    names.push_back(l.name);
    cycles.values.push_back(or_nan(l.cycles));
    cycles.colours.push_back(l.bottleneck ? kRed : "");
  }
  std::vector<BarLine> lines;
  if (target) lines.push_back({"clock / target FPS", kOrange, *target});
  s += figure(bars_svg("Cycles per frame per layer (red: bottleneck)", names, {cycles}, lines, "cycles per frame"));
  s += layer_resources_figure(r, names);
  s += "<table>\n" + head_row({"#", "layer", "type", "τ", "g1", "g2", "rank", "MACs ratio", "params ratio", "cycles",
                               "DSP", "BRAM18", "LUT", "bottleneck"});
  std::int64_t i = 0;
  for (const auto& l : r.layers) {
    s += std::string(l.bottleneck ? "<tr class=\"bottleneck\">" : "<tr>") + num_cell(i++) + text_cell(l.name) +
         text_cell(l.type);
    if (l.tau)
      s += text_cell(l.tau->type) + num_cell(std::int64_t{l.tau->g1}) + num_cell(std::int64_t{l.tau->g2}) +
           num_cell(std::int64_t{l.tau->rank});
    else
      s += "<td class=\"missing\" colspan=\"4\">not decomposable</td>";
    s += num_cell(l.mac_ratio) + num_cell(l.param_ratio) + num_cell(l.cycles) + num_cell(l.dsp) + num_cell(l.bram18) +
         num_cell(l.lut) + text_cell(l.bottleneck ? "yes" : "") + "</tr>\n";
  }
  return s + "</table>\n";
}

std::string search_section(const FlowReport& r) {
  std::string s = heading("search", "Search");
  if (!r.search) return s + not_run();
  const Search& se = *r.search;
  const derived::SearchSummary sum = derived::summarise(se);
  s += "<table>\n<tr><th>oracle</th>" + text_cell(se.oracle) + "</tr>\n<tr><th>points evaluated</th>" +
       num_cell(sum.points) + "</tr>\n<tr><th>points feasible</th>" + num_cell(sum.feasible) +
       "</tr>\n<tr><th>best feasible: top-1 (%)</th>" + num_cell(sum.best ? Num(sum.best->accuracy) : Num{}) +
       "</tr>\n<tr><th>best feasible: FPS</th>" + num_cell(sum.best ? Num(sum.best->fps) : Num{}) + "</tr>\n</table>\n";
  std::vector<PlotMarker> markers;
  for (const auto& m : se.baselines) markers.push_back({m.name, m.fps, m.accuracy});
  if (se.answer) markers.push_back({se.answer->name, se.answer->fps, se.answer->accuracy});
  if (!markers.empty()) {
    s += "<h3>The baselines' answers and the search's</h3>\n<table>\n" +
         head_row({"design", "FPS (the oracle's, batch 1)", "top-1 (%), the search's fitness"});
    for (const auto& m : se.baselines)
      s += "<tr>" + text_cell(m.name) + num_cell(m.fps) + num_cell(m.accuracy) + "</tr>\n";
    if (se.answer)
      s += "<tr><th>" + html_escape(se.answer->name) + "</th>" + num_cell(se.answer->fps) +
           num_cell(se.answer->accuracy) + "</tr>\n";
    s += "</table>\n";
  }
  if (!se.convergence.empty()) {
    PlotSeries acc{"best top-1", kBlue, {}, {}, true}, fps{"best FPS", kGreen, {}, {}, true};
    for (const auto& g : se.convergence) {
      if (g.best_accuracy) acc.x.push_back(g.generation), acc.y.push_back(*g.best_accuracy);
      if (g.best_fps) fps.x.push_back(g.generation), fps.y.push_back(*g.best_fps);
    }
    // The baselines' answers and the search's as levels: where the
    // evolution started from and where it ended against them.
    s +=
        figure(plot_svg("Search convergence: accuracy", "generation", "best top-1 (%)", {acc}, marker_levels(markers)));
    std::vector<PlotLine> target;
    if (r.header.fps_target) target.push_back({"FPS target", kOrange, *r.header.fps_target, false});
    s += figure(plot_svg("Search convergence: FPS of the best design", "generation", "batch-1 FPS", {fps}, target));
  }
  if (!se.points.empty()) {
    PlotSeries ok{"feasible", kGreen, {}, {}}, bad{"infeasible", kRed, {}, {}};
    for (const auto& pt : se.points) {
      PlotSeries& to = pt.feasible ? ok : bad;
      to.x.push_back(pt.fps), to.y.push_back(pt.accuracy);
    }
    std::vector<PlotLine> target;
    if (r.header.fps_target) target.push_back({"FPS target", kOrange, *r.header.fps_target, true});
    std::vector<PlotSeries> series{bad, ok};
    for (auto& m : marker_series(markers)) series.push_back(std::move(m));
    s += figure(plot_svg("Evaluated designs: accuracy against FPS", "batch-1 FPS", "top-1 (%)", series, target));
  }
  return s;
}

std::string predictor_section(const FlowReport& r) {
  std::string s = heading("predictor", "Predictor");
  if (!r.predictor) return s + not_run();
  const derived::PredictorSummary sum = derived::summarise(*r.predictor);
  s += "<table>\n<tr><th>designs compared</th>" + num_cell(sum.pairs) + "</tr>\n<tr><th>mean absolute error (%)</th>" +
       num_cell(sum.mean_abs_error_pct) + "</tr>\n<tr><th>within ±10%</th>" + num_cell(sum.within_10pct) +
       "</tr>\n</table>\n";
  ScatterSeries pts{"designs", kBlue, {}, {}};
  for (const auto& q : r.predictor->pairs) pts.x.push_back(q.systemc), pts.y.push_back(q.predicted);
  if (!pts.x.empty())
    s += figure(scatter_svg("Predicted against SystemC batch-1 FPS", "SystemC FPS", "predicted FPS", {pts}));
  return s;
}

std::string agreement_section(const FlowReport& r) {
  std::string s = heading("agreement", "Models agreement");
  if (!r.agreement) return s + not_run();
  s += "<table>\n" + head_row({"frame / design", "analytical (cycles)", "SystemC (cycles)", "RTL (cycles)",
                               "analytical vs SystemC (%)", "RTL vs SystemC (%)"});
  std::vector<std::string> names;
  BarSeries a{"analytical", kBlue, {}}, c{"SystemC", kGreen, {}}, t{"RTL", kOrange, {}};
  for (const auto& row : r.agreement->rows) {
    s += "<tr>" + text_cell(row.name) + num_cell(row.analytical) + num_cell(row.systemc) + num_cell(row.rtl) +
         num_cell(derived::deviation_pct(row.analytical, row.systemc)) +
         num_cell(derived::deviation_pct(row.rtl, row.systemc)) + "</tr>\n";
    names.push_back(row.name);
    a.values.push_back(or_nan(row.analytical)), c.values.push_back(or_nan(row.systemc));
    t.values.push_back(or_nan(row.rtl));
  }
  s += "</table>\n";
  if (!names.empty()) s += figure(bars_svg("Cycles in the three models", names, {a, c, t}, {}, "cycles"));
  return s;
}

std::string package_section(const FlowReport& r) {
  std::string s = heading("package", "Package");
  if (!r.package) return s + not_run();
  const Package& pk = *r.package;
  s += "<table>\n<tr><th>platform</th>" + text_cell(pk.platform) + "</tr>\n<tr><th>kernel clock (MHz)</th>" +
       num_cell(pk.kernel_mhz) + "</tr>\n<tr><th>total size (bytes)</th>" + num_cell(derived::total_bytes(pk)) +
       "</tr>\n</table>\n";
  s += "<h3>SLR assignment</h3>\n";
  if (pk.slrs.empty()) {
    s += "<p class=\"missing\">no floorplan</p>\n";
  } else {
    s += "<table>\n" + head_row({"SLR", "blocks", "first", "last", "DSP", "BRAM18", "URAM", "LUT"});
    for (const auto& slr : pk.slrs)
      s += "<tr>" + num_cell(std::int64_t{slr.slr}) + num_cell(static_cast<std::int64_t>(slr.blocks.size())) +
           text_cell(slr.blocks.empty() ? "" : slr.blocks.front()) +
           text_cell(slr.blocks.empty() ? "" : slr.blocks.back()) + num_cell(slr.dsp) + num_cell(slr.bram18) +
           num_cell(slr.uram) + num_cell(slr.lut) + "</tr>\n";
    s += "</table>\n";
    std::string streams;
    for (const auto& c : pk.crossing_streams) streams += (streams.empty() ? "" : ", ") + html_escape(c);
    s += p("streams crossing SLRs", streams.empty() ? "none" : streams);
  }
  s += "<h3>Files</h3>\n<table>\n" + head_row({"file", "bytes"});
  for (const auto& f : pk.files) s += "<tr>" + text_cell(f.path) + num_cell(f.bytes) + "</tr>\n";
  return s + "</table>\n";
}

}  // namespace mixtd::report::html
