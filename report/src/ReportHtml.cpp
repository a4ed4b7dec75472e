// report.html: the page, its header, the headline and the steps (the other
// sections: HtmlSections.cpp). XHTML-compatible markup, so the page is also
// well-formed XML; inline CSS and SVG only.
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

std::string headline_section(const FlowReport& r) {
  std::string s = heading("headline", "Headline");
  if (!r.headline) return s + not_run();
  const Headline& h = *r.headline;
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
