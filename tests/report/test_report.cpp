// The report library (issue 23): report.json parses and holds the figures,
// report.html is well-formed (xmllint, as XML and as HTML), self-contained
// (no script, no external URL) and shows each figure as the JSON writes it;
// a report with nothing run still renders; bars_svg with a network's ~70
// layers is deterministic and well-formed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "MiniJson.h"
#include "mixtd/report/BarsSvg.h"
#include "mixtd/report/FlowReport.h"
#include "mixtd/report/Format.h"
#include "mixtd/report/PlotSvg.h"

namespace {

using namespace mixtd::report;
namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::Not;

int sh(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

bool have_xmllint() { return sh("command -v xmllint >/dev/null 2>&1") == 0; }

fs::path scratch_dir() { return fs::temp_directory_path() / ("mixtd_report_test_" + std::to_string(::getpid())); }

// The scratch files go when the test binary ends.
class RemoveScratch : public testing::Environment {
 public:
  void TearDown() override { fs::remove_all(scratch_dir()); }
};
[[maybe_unused]] testing::Environment* const remove_scratch = testing::AddGlobalTestEnvironment(new RemoveScratch);

fs::path scratch(const std::string& name, const std::string& text) {
  const fs::path d = scratch_dir();
  fs::create_directories(d);
  std::ofstream(d / name, std::ios::binary) << text;
  return d / name;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// xmllint --html's complaints other than SVG's elements (HTML4's parser
// does not know them; every other error counts).
std::vector<std::string> html_errors(const fs::path& page) {
  const fs::path err = page.string() + ".err";
  EXPECT_EQ(sh("xmllint --html --noout " + page.string() + " 2>" + err.string()), 0);
  const std::regex svg_tag("HTML parser error : Tag (svg|rect|line|polyline|circle|text|title) invalid");
  std::vector<std::string> errors;
  std::istringstream in(read_text(err));
  for (std::string line; std::getline(in, line);)
    if (line.find("error") != std::string::npos && !std::regex_search(line, svg_tag)) errors.push_back(line);
  return errors;
}

FlowReport full_report() {
  FlowReport r;
  r.header = {"resnet18 <u250> & \"fast\"", "resnet18", "u250", 200.0, 0.9, 1079.0, "2024-05-01"};
  Headline h;
  h.fps_batch1_analytical = 1041.2345, h.fps_peak_analytical = 1100.5;
  h.fps_batch1_systemc = 1035.77, h.fps_peak_systemc = 1093.1;
  h.latency_cycles = 192087, h.latency_ms = 0.960435;
  h.dsp = {6394, 12288}, h.bram18 = {3000, 5376}, h.uram = {640, 1280}, h.lut = {912345.5, 1728000};
  h.ff = ResourceUse{1.2e6, std::nullopt};
  h.weight_bytes = 4375000;
  h.top1_float = 69.758, h.top1_bfp8 = 69.1, h.top1_decomposed = 66.42, h.top1_finetuned = 68.9;
  h.undecomposed = Undecomposed{760.4, 755.25, 9350000};
  r.headline = h;
  for (int i = 0; i < 70; ++i) {
    LayerRow l;
    l.name = i == 7 ? "<script>alert(1)</script>" : "layer" + std::to_string(i / 4) + ".block.conv" + std::to_string(i);
    if (i == 9) l.name = "features.denseblock4.denselayer16.conv2.decomposed";
    l.type = i % 5 == 0 ? "pool" : "conv";
    if (i % 5 != 0) l.tau = Tau{i % 2 ? "svd" : "cpd", 1 + i % 2, 2, 16 + i};
    l.mac_ratio = 0.5 - i * 0.001, l.param_ratio = 0.25 + i * 0.0031;
    if (i != 3) l.cycles = 100000 + 997.5 * i;
    l.dsp = 50 + i, l.bram18 = 20 + i, l.lut = 5000 + 37 * i;
    l.bottleneck = i == 69;
    r.layers.push_back(l);
  }
  Search s;
  s.oracle = "forest";
  for (int g = 0; g < 30; ++g) s.convergence.push_back({double(g), 60 + g * 0.3, 900 + g * 7.0});
  for (int i = 0; i < 200; ++i) s.points.push_back({500 + 7.0 * i, 50 + (i % 37) * 0.5, 500 + 7.0 * i >= 1079});
  s.baselines = {{"uniform", 1100, 62.5}, {"greedy", 1100, 62.5}, {"alds <x>", 1205.5, 61.25}};
  s.answer = Marker{"answer", 1085.5, 66.75};
  r.search = s;
  Predictor p;
  for (int i = 0; i < 50; ++i) p.pairs.push_back({800 + 10.0 * i, (800 + 10.0 * i) * (1 + ((i % 7) - 3) * 0.02)});
  r.predictor = p;
  r.agreement = Agreement{{{"frame 0", 192000, 192087, 192090}, {"frame 1", 192000, 192101, std::nullopt}}};
  Package pk;
  pk.platform = "xilinx_u250_gen3x16_xdma_4_1_202210_1", pk.kernel_mhz = 300;
  pk.files = {{"kernel.xml", 1234}, {"rtl/mixtd_top.sv", 456789}, {"host/host.cpp", 9876}};
  pk.slrs = {{0, {"conv1", "layer1"}, 1500, 700, 100, 200000}, {1, {"layer2", "layer3"}, 2000, 800, 200, 250000}};
  pk.crossing_streams = {"s12"};
  r.package = pk;
  r.steps = {{"decompose", StepStatus::ran, 12.5, "16 layers decomposed"},
             {"search", StepStatus::skipped_unchanged, 0.01, "unchanged: 1041 FPS"},
             {"package", StepStatus::failed, 3.25, "vivado not found"},
             {"cosim", StepStatus::not_run, std::nullopt, ""}};
  return r;
}

// Every number in v, with its path; lists that are plotted only (not
// tabulated) are left out.
void numbers(const minijson::Value& v, const std::string& path, std::vector<std::pair<std::string, std::string>>& out) {
  if (v.kind == minijson::Value::Number) out.emplace_back(path, v.text);
  for (std::size_t i = 0; i < v.items.size(); ++i) numbers(v.items[i], path + "[" + std::to_string(i) + "]", out);
  for (const auto& [k, f] : v.fields)
    if (k != "points" && k != "pairs" && k != "convergence") numbers(f, path + "." + k, out);
}

TEST(Format, OneRuleForEveryNumber) {
  EXPECT_EQ(format_number(0.0), "0");
  EXPECT_EQ(format_number(-0.0), "0");
  EXPECT_EQ(format_number(1041.2345), "1041.23");
  EXPECT_EQ(format_number(69.758), "69.758");
  EXPECT_EQ(format_number(12288.0), "12288");
  EXPECT_EQ(format_number(123456.7), "123457");
  EXPECT_EQ(format_number(-2.5e6), "-2500000");
  EXPECT_EQ(format_number(1.5e-5), "1.5e-05");
  EXPECT_EQ(format_number(1e20), "1e+20");
  EXPECT_EQ(format_number(std::nan("")), "null");
  EXPECT_EQ(format_number(std::int64_t{4375000}), "4375000");
  EXPECT_EQ(json_string("a\"b\\c\nd\x01τ"), "\"a\\\"b\\\\c\\nd\\u0001τ\"");
  EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(format_grouped(4506.8), "4,507");
  EXPECT_EQ(format_grouped(1234567.891, 2), "1,234,567.89");
  EXPECT_EQ(format_grouped(-0.001, 2), "0.00");
  EXPECT_EQ(format_grouped(-3286), "−3,286");
  EXPECT_EQ(format_ratio(1.3716), "1.37");
  EXPECT_EQ(format_ratio(2.1034), "2.1");
  EXPECT_EQ(format_ratio(12.34), "12.3");
  EXPECT_EQ(format_ratio(1234.6), "1,235");
  EXPECT_EQ(format_points(-1.3333), "−1.33");
  EXPECT_EQ(format_points(0.2), "+0.20");
  EXPECT_EQ(abbreviate("short"), "short");
  EXPECT_EQ(abbreviate("features.denseblock4.denselayer16.conv2"), "features.den…yer16.conv2");
}

TEST(Report, JsonParsesAndHoldsTheFigures) {
  const FlowReport r = full_report();
  const minijson::Value j = minijson::parse(to_json(r));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.fields) keys.push_back(k);
  EXPECT_THAT(keys, testing::ElementsAre("schema", "header", "headline", "layers", "search", "predictor", "agreement",
                                         "package", "steps"));
  EXPECT_EQ(j.at("header").at("flow").text, r.header.flow);
  EXPECT_EQ(j.at("header").at("budget").text, "0.9");
  const auto& h = j.at("headline");
  EXPECT_EQ(h.at("fps_batch1_analytical").text, "1041.23");
  EXPECT_EQ(h.at("latency_ms").text, "0.960435");
  EXPECT_EQ(h.at("weight_bytes").text, "4375000");
  EXPECT_EQ(h.at("resources").at("dsp").at("used").text, "6394");
  EXPECT_NEAR(h.at("resources").at("dsp").at("utilisation_pct").number(), 100.0 * 6394 / 12288, 1e-3);
  EXPECT_NEAR(h.at("resources").at("dsp").at("budget_pct").number(), 100.0 * 6394 / (12288 * 0.9), 1e-3);
  EXPECT_EQ(h.at("resources").at("ff").at("available").kind, minijson::Value::Null);
  const auto& v = h.at("versus_undecomposed");
  std::vector<std::string> versus;
  for (const auto& [k, x] : v.fields) versus.push_back(k);
  EXPECT_THAT(versus, testing::ElementsAre("undecomposed_fps_batch1_analytical", "undecomposed_fps_batch1_systemc",
                                           "undecomposed_weight_bytes", "fps_ratio_analytical", "fps_ratio_systemc",
                                           "weight_ratio", "top1_delta_pp"));
  EXPECT_EQ(v.at("undecomposed_fps_batch1_analytical").text, "760.4");
  EXPECT_EQ(v.at("undecomposed_weight_bytes").text, "9350000");
  EXPECT_EQ(v.at("fps_ratio_analytical").text, format_number(1041.2345 / 760.4));
  EXPECT_EQ(v.at("fps_ratio_systemc").text, format_number(1035.77 / 755.25));
  EXPECT_EQ(v.at("weight_ratio").text, "2.13714");  // undecomposed / this design: times smaller
  EXPECT_EQ(v.at("top1_delta_pp").text, format_number(68.9 - 69.1));
  EXPECT_EQ(j.at("layers").at("rows").items.size(), 70u);
  EXPECT_EQ(j.at("layers").at("rows").items[3].at("cycles").kind, minijson::Value::Null);
  EXPECT_EQ(j.at("layers").at("rows").items[7].at("name").text, "<script>alert(1)</script>");
  EXPECT_EQ(j.at("layers").at("rows").items[5].at("tau").kind, minijson::Value::Null);
  EXPECT_EQ(j.at("layers").at("rows").items[6].at("tau").at("rank").text, "22");
  EXPECT_NEAR(j.at("layers").at("target_interval_cycles").number(), 200e6 / 1079, 1);
  EXPECT_EQ(j.at("search").at("points").items.size(), 200u);
  EXPECT_EQ(j.at("search").at("points_feasible").text, "117");
  ASSERT_EQ(j.at("search").at("baselines").items.size(), 3u);
  EXPECT_EQ(j.at("search").at("baselines").items[2].at("name").text, "alds <x>");
  EXPECT_EQ(j.at("search").at("baselines").items[2].at("fps").text, "1205.5");
  EXPECT_EQ(j.at("search").at("answer").at("accuracy_pct").text, "66.75");
  EXPECT_EQ(j.at("predictor").at("pairs_compared").text, "50");
  EXPECT_EQ(j.at("agreement").at("rows").items[1].at("rtl_vs_systemc_pct").kind, minijson::Value::Null);
  EXPECT_EQ(j.at("package").at("total_bytes").text, "467899");
  EXPECT_EQ(j.at("steps").items[1].at("status").text, "skipped-unchanged");
  EXPECT_EQ(j.at("steps").items[2].at("status").text, "failed");
  EXPECT_EQ(to_json(r), to_json(full_report()));
}

TEST(Report, HtmlIsWellFormedAndSelfContained) {
  const std::string html = to_html(full_report());
  EXPECT_EQ(html, to_html(full_report()));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  std::size_t svgs = 0;
  const std::string xmlns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (std::size_t at = html.find("http://"); at != std::string::npos; at = html.find("http://", at + 1), ++svgs)
    EXPECT_EQ(html.compare(at - 7, xmlns.size(), xmlns), 0) << html.substr(at - 20, 80);
  EXPECT_EQ(svgs, 8u);  // resources, 2 per layer, 2 convergence, accuracy-FPS, predictor, agreement
  if (!have_xmllint()) GTEST_SKIP() << "xmllint (libxml2-utils) not installed";
  const fs::path page = scratch("report.html", html);
  EXPECT_EQ(sh("xmllint --noout " + page.string()), 0);  // well-formed as XML too
  EXPECT_THAT(html_errors(page), testing::IsEmpty());
}

TEST(Report, EveryFigureInTheJsonAppearsVerbatimInTheHtml) {
  const FlowReport r = full_report();
  const std::string html = to_html(r);
  const minijson::Value j = minijson::parse(to_json(r));
  std::vector<std::pair<std::string, std::string>> figures;
  numbers(j.at("headline"), "headline", figures);
  // 6 performance, 4 × 4 + 1 resources (FF: used only), weight, 4 accuracies, 7 against the undecomposed
  EXPECT_EQ(figures.size(), 35u);
  for (const char* section : {"header", "layers", "search", "predictor", "agreement", "package", "steps"})
    numbers(j.at(section), section, figures);
  for (const auto& [path, text] : figures)
    EXPECT_NE(html.find(">" + text + "<"), std::string::npos) << path << " " << text;
}

TEST(Report, TheHeadlineSaysTheDesignAgainstTheUndecomposedInWords) {
  const std::string html = to_html(full_report());
  EXPECT_THAT(html, HasSubstr("<b>1,041 FPS</b> (batch 1, analytical) = <b>1.37×</b> the undecomposed 760"));
  EXPECT_THAT(html, HasSubstr("<b>1,036 FPS</b> (batch 1, SystemC) = <b>1.37×</b> the undecomposed 755"));
  EXPECT_THAT(html, HasSubstr("weights <b>2.14× smaller</b> (35 Mb against 74.8 Mb)"));
  EXPECT_THAT(html, HasSubstr("accuracy <b>−0.20 pp</b> vs BFP8 undecomposed (fine-tuned 68.90% against 69.10%)"));
  // Without the search's figures: the accuracy alone, the ratios null, the
  // table says why.
  FlowReport r = full_report();
  r.headline->undecomposed.reset();
  r.headline->weight_bytes = 10000000;
  const std::string without = to_html(r);
  EXPECT_THAT(without, Not(HasSubstr("the undecomposed 760")));
  EXPECT_THAT(without, HasSubstr("accuracy <b>−0.20 pp</b>"));
  EXPECT_THAT(without, HasSubstr("the search recorded no undecomposed design"));
  const minijson::Value j = minijson::parse(to_json(r));
  EXPECT_EQ(j.at("headline").at("versus_undecomposed").at("fps_ratio_analytical").kind, minijson::Value::Null);
  EXPECT_EQ(j.at("headline").at("versus_undecomposed").at("weight_ratio").kind, minijson::Value::Null);
  // More weights than the network: "larger", not "0.94× smaller".
  r.headline->undecomposed = Undecomposed{760.4, std::nullopt, 9350000};
  const std::string larger = to_html(r);
  EXPECT_THAT(larger, HasSubstr("weights <b>1.07× larger</b>"));
  EXPECT_THAT(larger, Not(HasSubstr("(batch 1, SystemC)")));
  // Not fine-tuned (finetune.epochs 0): the searched design's top-1 against BFP8.
  r.headline->top1_finetuned.reset();
  EXPECT_THAT(to_html(r), HasSubstr("accuracy <b>−2.68 pp</b> vs BFP8 undecomposed (not fine-tuned 66.42% against"));
  r.headline->weight_bytes = 9350000;
  EXPECT_THAT(to_html(r), HasSubstr("weights <b>the same</b> (74.8 Mb against 74.8 Mb)"));
}

TEST(Report, TheSearchPlotsMarkTheBaselinesAndTheAnswer) {
  const std::string html = to_html(full_report());
  const auto search =
      html.substr(html.find("id=\"search\""), html.find("id=\"predictor\"") - html.find("id=\"search\""));
  // A labelled, outlined dot each in the scatter; a level each in the convergence.
  for (const char* name : {">uniform<", ">greedy<", ">alds &lt;x&gt;<", ">answer<"}) {
    std::size_t n = 0;
    for (auto at = search.find(name); at != std::string::npos; at = search.find(name, at + 1)) ++n;
    EXPECT_GE(n, 4u) << name;  // table, scatter label and legend, convergence legend
  }
  EXPECT_THAT(search, HasSubstr("r=\"6.0\" fill=\"#9467bd\" stroke=\"#222\""));
  EXPECT_THAT(search, Not(HasSubstr("<x>")));
}

TEST(PlotSvg, MarkersOnOneDesignStackTheirLabels) {
  const auto series = marker_series({{"uniform", 10, 50}, {"greedy", 10, 50}, {"answer", 20, 60}});
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[2].colour, "#000000");
  const std::string svg = plot_svg("t", "x", "y", series);
  EXPECT_EQ(svg, plot_svg("t", "x", "y", series));
  const std::regex label("<text x=\"([0-9.]+)\" y=\"([0-9.]+)\" font-size=\"11\" fill=\"#222\">(\\w+)</text>");
  std::map<std::string, double> y;
  for (std::sregex_iterator it(svg.begin(), svg.end(), label), end; it != end; ++it)
    y[(*it)[3].str()] = std::stod((*it)[2].str());
  ASSERT_EQ(y.size(), 3u) << svg;
  EXPECT_NEAR(y["greedy"] - y["uniform"], 13, 0.11);  // the same point: one label under the other
  const auto levels = marker_levels({{"uniform", 10, 50}, {"answer", 20, 60}});
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_FALSE(levels[1].vertical);
  EXPECT_EQ(levels[1].value, 60);
  EXPECT_EQ(levels[0].colour, series[0].colour);
}

TEST(Report, NothingRunStillRenders) {
  FlowReport r;
  r.header.flow = "empty";
  const minijson::Value j = minijson::parse(to_json(r));
  for (const char* section : {"headline", "layers", "search", "predictor", "agreement", "package"})
    EXPECT_EQ(j.at(section).kind, minijson::Value::Null) << section;
  EXPECT_EQ(j.at("steps").items.size(), 0u);
  EXPECT_EQ(j.at("header").at("clock_mhz").kind, minijson::Value::Null);
  const std::string html = to_html(r);
  std::size_t not_run = 0;
  for (std::size_t at = html.find(">not run<"); at != std::string::npos; at = html.find(">not run<", at + 1)) ++not_run;
  EXPECT_EQ(not_run, 7u);
  EXPECT_THAT(html, Not(HasSubstr("<svg")));
  if (!have_xmllint()) GTEST_SKIP() << "xmllint (libxml2-utils) not installed";
  const fs::path page = scratch("empty.html", html);
  EXPECT_EQ(sh("xmllint --noout " + page.string()), 0);
  EXPECT_THAT(html_errors(page), testing::IsEmpty());
}

TEST(BarsSvg, SeventyLayersDeterministicAndWellFormed) {
  std::vector<std::string> names;
  BarSeries cycles{"cycles", "#1f77b4", {}}, other{"DSP \"share\"", "#ff7f0e", {}};
  for (int i = 0; i < 70; ++i) {
    names.push_back(i % 10 == 0 ? "features.denseblock" + std::to_string(i) + ".denselayer.conv2 <x&y>"
                                : "layer" + std::to_string(i));
    cycles.values.push_back(i == 5 ? std::nan("") : 1000.0 + 37 * i);
    other.values.push_back(i % 3 == 0 ? 0.0 : 3.5 * i);
  }
  const std::vector<BarLine> lines = {{"target", "#d62728", 2500}};
  for (Scale scale : {Scale::linear, Scale::log}) {
    const std::string svg = bars_svg("Per layer <cycles>", names, {cycles, other}, lines, "cycles & DSP", scale);
    EXPECT_EQ(svg, bars_svg("Per layer <cycles>", names, {cycles, other}, lines, "cycles & DSP", scale));
    EXPECT_THAT(svg, HasSubstr("features.den…conv2 &lt;x&amp;y&gt;"));
    EXPECT_THAT(svg, HasSubstr(">layer69<"));
    EXPECT_THAT(svg, HasSubstr("<title>layer1: cycles = 1037</title>"));
    EXPECT_THAT(svg, HasSubstr("target = 2500"));
    // One bar per finite value (the log axis drops the zeros).
    std::size_t bars = 0;
    for (std::size_t at = svg.find("</title></rect>"); at != std::string::npos;
         at = svg.find("</title></rect>", at + 1))
      ++bars;
    EXPECT_EQ(bars, scale == Scale::linear ? 139u : 115u);
    if (!have_xmllint()) continue;
    const fs::path f = scratch(scale == Scale::log ? "bars-log.svg" : "bars.svg", svg);
    EXPECT_EQ(sh("xmllint --noout " + f.string()), 0);
  }
  EXPECT_THAT(bars_svg("nothing", {}, {}), HasSubstr("no data"));
}

}  // namespace
