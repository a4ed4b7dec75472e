// report.html: the page, its header, the headline and the steps (the other
// sections: HtmlSections.cpp). XHTML-compatible markup, so the page is also
// well-formed XML; inline CSS and SVG only.
#include <cmath>

#include "Derived.h"
#include "Html.h"
#include "mixtd/report/BarsSvg.h"
#include "mixtd/report/FlowReport.h"

namespace mixtd::report {

using namespace html;

namespace {

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:24px auto;max-width:1100px;color:#222}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f2f2f2}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.bottleneck td{background:#fde8e8}
.missing{color:#888;font-style:italic}
div.figure{margin:8px 0;overflow-x:auto}
p.nav a{margin-right:12px}
ul.lead{font-size:16px;line-height:1.6}
)";

struct SectionLink {
  const char* id;
  const char* title;
};
constexpr SectionLink kSections[] = {
    {"header", "Run"},          {"headline", "Headline"},          {"layers", "Per layer"}, {"search", "Search"},
    {"predictor", "Predictor"}, {"agreement", "Models agreement"}, {"package", "Package"},  {"steps", "Steps"}};

std::string row(const std::string& name, const std::string& cells) {
  return "<tr><th>" + html_escape(name) + "</th>" + cells + "</tr>\n";
}

std::string header_section(const Header& h) {
  std::string s = heading("header", "Run") + "<table>\n";
  s += row("flow", text_cell(h.flow));
  s += row("network", text_cell(h.network));
  s += row("device", text_cell(h.device));
  s += row("clock (MHz)", num_cell(h.clock_mhz));
  s += row("budget (fraction of the device)", num_cell(h.budget));
  s += row("FPS target (batch 1)", num_cell(h.fps_target));
  s += row("date", text_cell(h.date));
  return s + "</table>\n";
}

// The headline's first lines: the design beside the undecomposed one, in
// words ("4,507 FPS = 1.37× the undecomposed 3,286"), each only where both
// sides are known. The exact figures follow in versus_table().
std::string versus_lead(const Headline& h) {
  const derived::VersusUndecomposed v = derived::versus_undecomposed(h);
  const Undecomposed u = h.undecomposed.value_or(Undecomposed{});
  std::vector<std::string> items;
  const auto mbit = [](std::int64_t bytes) { return format_ratio(static_cast<double>(bytes) * 8 / 1e6); };
  const auto fps = [](const char* model, const Num& mine, const Num& theirs, const Num& ratio) {
    return "<b>" + format_grouped(*mine) + " FPS</b> (batch 1, " + model + ") = <b>" + format_ratio(*ratio) +
           "×</b> the undecomposed " + format_grouped(*theirs);
  };
  if (v.fps_ratio_analytical)
    items.push_back(fps("analytical", h.fps_batch1_analytical, u.fps_batch1_analytical, v.fps_ratio_analytical));
  if (v.fps_ratio_systemc)
    items.push_back(fps("SystemC", h.fps_batch1_systemc, u.fps_batch1_systemc, v.fps_ratio_systemc));
  if (v.weight_ratio) {
    // Below 1 the design carries more weights than the network (a rank above
    // the break-even): say so rather than "0.8× smaller".
    const double w = *v.weight_ratio;
    const std::string how = std::fabs(w - 1) < 0.005 ? "the same"
                            : w > 1                  ? format_ratio(w) + "× smaller"
                                                     : format_ratio(1 / w) + "× larger";
    items.push_back("weights <b>" + how + "</b> (" + mbit(*h.weight_bytes) + " Mb against " + mbit(*u.weight_bytes) +
                    " Mb)");
  }
  if (v.top1_delta_pp)
    items.push_back("accuracy <b>" + format_points(*v.top1_delta_pp) + " pp</b> vs BFP8 undecomposed (" +
                    (h.top1_finetuned ? "fine-tuned " : "not fine-tuned ") +
                    format_grouped(*derived::top1_final(h), 2) + "% against " + format_grouped(*h.top1_bfp8, 2) + "%)");
  if (items.empty()) return "";
  std::string s = "<ul class=\"lead\">\n";
  for (const auto& i : items) s += "<li>" + i + "</li>\n";
  return s + "</ul>\n";
}

std::string versus_table(const Headline& h) {
  const derived::VersusUndecomposed v = derived::versus_undecomposed(h);
  const Undecomposed u = h.undecomposed.value_or(Undecomposed{});
  const auto bytes = [](const std::optional<std::int64_t>& b) { return b ? num_cell(*b) : num_cell(Num{}); };
  // The two are not solved at one budget fraction: say so, since a design
  // that needs less than the target reads as "0.6× the undecomposed".
  std::string s =
      "<h3>Against the undecomposed design</h3>\n<p>The undecomposed network's design is solved at the same device "
      "and budget (the search's figures); this design is the search's answer, whose budget the search trims to "
      "the least that meets the FPS target.</p>\n<table>\n" +
      head_row({"", "this design", "undecomposed", "ratio / difference"});
  s += row("FPS, batch 1, analytical (×)",
           num_cell(h.fps_batch1_analytical) + num_cell(u.fps_batch1_analytical) + num_cell(v.fps_ratio_analytical));
  s += row("FPS, batch 1, SystemC (×)",
           num_cell(h.fps_batch1_systemc) + num_cell(u.fps_batch1_systemc) + num_cell(v.fps_ratio_systemc));
  s +=
      row("weight memory, bytes (× smaller)", bytes(h.weight_bytes) + bytes(u.weight_bytes) + num_cell(v.weight_ratio));
  s += row(h.top1_finetuned || !h.top1_decomposed ? "top-1 (%): fine-tuned against BFP8 (pp)"
                                                  : "top-1 (%): not fine-tuned against BFP8 (pp)",
           num_cell(derived::top1_final(h)) + num_cell(h.top1_bfp8) + num_cell(v.top1_delta_pp));
  if (!h.undecomposed)
    s += "<tr><td class=\"missing\" colspan=\"4\">the search recorded no undecomposed design</td></tr>\n";
  return s + "</table>\n";
}

std::string headline_section(const FlowReport& r) {
  std::string s = heading("headline", "Headline");
  if (!r.headline) return s + not_run();
  const Headline& h = *r.headline;
  s += versus_lead(h) + versus_table(h);
  s += "<h3>Performance</h3>\n<table>\n" + head_row({"", "analytical", "SystemC"});
  s += row("FPS, batch 1", num_cell(h.fps_batch1_analytical) + num_cell(h.fps_batch1_systemc));
  s += row("FPS, peak", num_cell(h.fps_peak_analytical) + num_cell(h.fps_peak_systemc));
  s += "</table>\n<table>\n";
  s += row("latency, batch 1 (cycles)", num_cell(h.latency_cycles));
  s += row("latency, batch 1 (ms)", num_cell(h.latency_ms));
  s += row("weight memory (bytes)", h.weight_bytes ? num_cell(*h.weight_bytes) : num_cell(Num{}));
  s += "</table>\n<h3>Resources</h3>\n<table>\n" + head_row({"", "used", "available", "% of device", "% of budget"});
  std::vector<std::string> names;
  BarSeries share{"used", "#1f77b4", {}};
  for (const auto& ref : derived::resources(h)) {
    if (!*ref.use) {
      s += row(ref.label, "<td class=\"missing\" colspan=\"4\">not run</td>");
      continue;
    }
    const ResourceUse& u = **ref.use;
    const Num budget = derived::budget_pct(u.used, u.available, r.header.budget);
    s += row(ref.label,
             num_cell(u.used) + num_cell(u.available) + num_cell(derived::utilisation_pct(u)) + num_cell(budget));
    if (budget) names.push_back(ref.label), share.values.push_back(*budget);
  }
  s += "</table>\n";
  if (!names.empty())
    s += figure(bars_svg("Resources against the budget", names, {share}, {{"budget", "#d62728", 100}},
                         "% of the budget (device × budget fraction)"));
  s += "<h3>Accuracy</h3>\n<table>\n" + head_row({"top-1 (%)", "float", "BFP8", "decomposed", "fine-tuned"});
  s += row("top-1 (%)",
           num_cell(h.top1_float) + num_cell(h.top1_bfp8) + num_cell(h.top1_decomposed) + num_cell(h.top1_finetuned));
  return s + "</table>\n";
}

std::string steps_section(const FlowReport& r) {
  std::string s = heading("steps", "Steps");
  if (r.steps.empty()) return s + not_run();
  s += "<table>\n" + head_row({"step", "status", "wall (s)", "summary"});
  for (const auto& st : r.steps)
    s += "<tr>" + text_cell(st.name) + text_cell(to_string(st.status)) + num_cell(st.wall_seconds) +
         text_cell(st.summary) + "</tr>\n";
  return s + "</table>\n";
}

}  // namespace

std::string to_html(const FlowReport& r) {
  const std::string name = r.header.flow.empty() ? std::string("mixtd flow") : r.header.flow;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>" +
                  html_escape(name) + " — mixtd flow report</title>\n<style>\n" + kStyle +
                  "</style>\n</head>\n<body>\n<h1>" + html_escape(name) +
                  " — mixtd flow report</h1>\n<p class=\"nav\">";
  for (const auto& l : kSections) s += "<a href=\"#" + std::string(l.id) + "\">" + html_escape(l.title) + "</a>";
  s += "</p>\n";
  s += header_section(r.header);
  s += headline_section(r);
  s += layers_section(r);
  s += search_section(r);
  s += predictor_section(r);
  s += agreement_section(r);
  s += package_section(r);
  s += steps_section(r);
  return s + "</body>\n</html>\n";
}

}  // namespace mixtd::report
