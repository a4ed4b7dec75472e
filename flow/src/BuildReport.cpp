#include "mixtd/flow/BuildReport.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mixtd/arch/Design.h"
#include "mixtd/hls/Floorplan.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Csv.h"
#include "mixtd/support/Error.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::flow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::optional<json> try_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  try {
    return json::parse(in);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A number, or the first of a list of them (simulate.json's per-frame
// latencies: frame 1 is the batch-1 latency).
report::Num num(const json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  const json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_array() && !v.empty() && v[0].is_number()) return v[0].get<double>();
  return std::nullopt;
}

report::Num top1(const fs::path& p) {
  const auto j = try_json(p);
  if (!j) return std::nullopt;
  const auto v = num(*j, "top1");
  return v ? report::Num(100 * *v) : std::nullopt;
}

// The rows of a CSV as column → value maps.
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
  std::vector<std::map<std::string, std::string>> rows;
  std::ifstream in(p);
  std::string line;
  if (!std::getline(in, line)) return rows;
  const auto head = split_csv_line(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto cells = split_csv_line(line);
    std::map<std::string, std::string> r;
    for (std::size_t i = 0; i < head.size() && i < cells.size(); ++i) r[head[i]] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

report::Num cell(const std::map<std::string, std::string>& r, const std::string& k) {
  const auto it = r.find(k);
  if (it == r.end() || it->second.empty()) return std::nullopt;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<report::ResourceUse> use(const json& a, const char* key) {
  if (!a.contains("resources") || !a["resources"].contains(key)) return std::nullopt;
  report::ResourceUse u;
  u.used = a["resources"][key].get<double>();
  if (a.contains("available") && a["available"].contains(key)) u.available = a["available"][key].get<double>();
  return u;
}

// The steps' JSON, each read once.
struct Artefacts {
  std::optional<json> analysis, simulate, cosim, search;  // search: search/summary.json
};

// The undecomposed design as the search evaluated it (summary.json's
// `undecomposed`, docs/search.md "Outputs"); weights converted to bytes as
// the final design's are, so the ratio compares like with like.
std::optional<report::Undecomposed> undecomposed(const std::optional<json>& summary) {
  if (!summary || !summary->contains("undecomposed") || !(*summary)["undecomposed"].is_object()) return std::nullopt;
  const json& u = (*summary)["undecomposed"];
  report::Undecomposed x;
  x.fps_batch1_analytical = num(u, "fps_analytical");
  x.fps_batch1_systemc = num(u, "fps_systemc");
  if (const auto mbit = num(u, "weight_mbit")) x.weight_bytes = static_cast<std::int64_t>(*mbit * 1e6 / 8 + 0.5);
  return x;
}

void fill_headline(report::FlowReport& r, const Artefacts& art, const fs::path& dir) {
  const auto& a = art.analysis;
  const auto& s = art.simulate;
  report::Headline h;
  if (a) {
    h.fps_batch1_analytical = num(*a, "fps_batch1");
    h.fps_peak_analytical = num(*a, "fps_peak");
    h.latency_cycles = num(*a, "latency_cycles_batch1");
    if (h.latency_cycles && r.header.clock_mhz) h.latency_ms = *h.latency_cycles / (*r.header.clock_mhz * 1e3);
    h.dsp = use(*a, "dsp");
    h.bram18 = use(*a, "bram18");
    h.uram = use(*a, "uram");
    h.lut = use(*a, "lut");
    h.ff = use(*a, "ff");
    if (const auto mbit = num(*a, "weight_mbit")) h.weight_bytes = static_cast<std::int64_t>(*mbit * 1e6 / 8 + 0.5);
  }
  if (s) {
    h.fps_batch1_systemc = num(*s, "fps_batch1");
    h.fps_peak_systemc = num(*s, "fps_peak");
  }
  h.top1_float = top1(dir / "network/accuracy-float.json");
  h.top1_bfp8 = top1(dir / "network/accuracy-bfp8.json");
  h.top1_decomposed = top1(dir / "finetune/accuracy-decomposed.json");
  h.top1_finetuned = top1(dir / "finetune/accuracy-finetuned.json");
  h.undecomposed = undecomposed(art.search);
  if (a || s || h.top1_float || h.undecomposed) r.headline = h;
}

void fill_layers(report::FlowReport& r, const Artefacts& art, const fs::path& dir) {
  const auto& a = art.analysis;
  if (!a || !a->contains("layers") || !fs::exists(dir / kFinalDesign)) return;
  const arch::Design d = arch::load_design(dir / kFinalDesign);
  for (const auto& l : (*a)["layers"]) {
    report::LayerRow row;
    row.name = l.value("layer", std::string());
    row.type = l.value("kind", std::string());
    row.cycles = num(l, "interval");
    row.bottleneck = l.value("bottleneck", false);
    if (l.contains("resources")) {
      row.dsp = num(l["resources"], "dsp");
      row.bram18 = num(l["resources"], "bram18");
      row.lut = num(l["resources"], "lut");
    }
    const net::Layer* layer = d.network.find(row.name);
    if (layer && td::is_decomposable(*layer)) {
      const auto it = d.layers.find(row.name);
      const td::Tau tau = it != d.layers.end() ? it->second.tau : td::Tau{};
      report::Tau t;
      t.type = std::string(td::to_string(tau.type));
      t.g1 = static_cast<int>(tau.g1);
      t.g2 = static_cast<int>(tau.g2);
      t.rank = static_cast<int>(tau.rank);
      row.tau = t;
      const td::LayerGeometry base = td::geometry(*layer, td::Tau{}), now = td::geometry(*layer, tau);
      row.mac_ratio = static_cast<double>(now.macs()) / static_cast<double>(base.macs());
      row.param_ratio = static_cast<double>(now.params()) / static_cast<double>(base.params());
    }
    r.layers.push_back(row);
  }
}

void fill_search(report::FlowReport& r, const FlowConfig& c, const Artefacts& art, const fs::path& dir) {
  if (!fs::exists(dir / "search/generations.csv")) return;
  report::Search s;
  s.oracle = c.search.oracle;
  for (const auto& g : read_csv(dir / "search/generations.csv")) {
    report::Generation x;
    x.generation = cell(g, "generation").value_or(0);
    if (const auto acc = cell(g, "best_accuracy")) x.best_accuracy = 100 * *acc;
    x.best_fps = cell(g, "best_fps");
    s.convergence.push_back(x);
  }
  report::Predictor p;
  for (const auto& row : read_csv(dir / "search/candidates.csv")) {
    const auto fps = cell(row, "fps_oracle"), acc = cell(row, "accuracy");
    const std::string status = row.count("status") ? row.at("status") : "";
    if (fps && acc && *fps > 0) s.points.push_back({*fps, 100 * *acc, status == "valid"});
    // The seeded start's baseline answers (kind seed-uniform, ...), valid or
    // a duplicate of an earlier seed: where each baseline landed.
    const std::string kind = row.count("kind") ? row.at("kind") : "";
    if (kind.rfind("seed-", 0) == 0 && fps && acc && *fps > 0) {
      const std::string name = kind.substr(5);
      const bool seen =
          std::any_of(s.baselines.begin(), s.baselines.end(), [&](const auto& m) { return m.name == name; });
      if (!seen) s.baselines.push_back({name, *fps, 100 * *acc});
    }
    const auto sim = cell(row, "fps_systemc");
    if (c.search.oracle == "forest" && fps && sim && *fps > 0 && *sim > 0) p.pairs.push_back({*sim, *fps});
  }
  // The answer at the figures it has in the plots: the oracle's FPS and the
  // fitness (before any budget trim, which moves neither).
  if (art.search && art.search->contains("best") && (*art.search)["best"].is_object()) {
    const json& b = (*art.search)["best"];
    const auto fps = num(b, "fps_oracle"), fit = num(b, "fitness");
    if (fps && fit) s.answer = report::Marker{"answer", *fps, 100 * *fit};
  }
  r.search = s;
  if (!p.pairs.empty()) r.predictor = p;
}

void fill_agreement(report::FlowReport& r, const Artefacts& art) {
  const auto& a = art.analysis;
  const auto& s = art.simulate;
  const auto& v = art.cosim;
  if (!a && !s && !v) return;
  report::Agreement g;
  report::AgreementRow lat{"latency, frame 1 (cycles)", {}, {}, {}}, iv{"interval (cycles)", {}, {}, {}};
  if (a) lat.analytical = num(*a, "latency_cycles_batch1"), iv.analytical = num(*a, "interval_cycles");
  if (s) lat.systemc = num(*s, "latency_cycles"), iv.systemc = num(*s, "interval_cycles");
  if (v) {
    if (v->contains("latency") && (*v)["latency"].is_array() && !(*v)["latency"].empty())
      lat.rtl = (*v)["latency"][0].get<double>();
    iv.rtl = num(*v, "interval");
  }
  g.rows = {lat, iv};
  r.agreement = g;
}

void fill_package(report::FlowReport& r, const FlowConfig& c, const fs::path& dir) {
  if (!fs::exists(dir / "package/Makefile")) return;
  report::Package p;
  p.platform = c.platform;
  p.kernel_mhz = c.kernel_mhz > 0 ? report::Num(c.kernel_mhz) : r.header.clock_mhz;
  std::vector<report::PackageFile> files;
  for (const auto& e : fs::recursive_directory_iterator(dir / "package"))
    if (e.is_regular_file())
      files.push_back(
          {fs::relative(e.path(), dir / "package").generic_string(), static_cast<std::int64_t>(e.file_size())});
  std::sort(files.begin(), files.end(), [](const auto& x, const auto& y) { return x.path < y.path; });
  p.files = files;
  try {
    const hls::Floorplan fp = hls::plan_slrs(arch::load_design(dir / kFinalDesign));
    for (int k = 0; k < fp.slrs_used(); ++k) {
      report::SlrUse u;
      u.slr = k;
      for (const auto& b : fp.blocks)
        if (b.slr == k) u.blocks.push_back(b.name);
      u.dsp = fp.used[static_cast<std::size_t>(k)].dsp;
      u.bram18 = fp.used[static_cast<std::size_t>(k)].bram18;
      u.uram = fp.used[static_cast<std::size_t>(k)].uram;
      u.lut = fp.used[static_cast<std::size_t>(k)].lut;
      p.slrs.push_back(u);
    }
    p.crossing_streams = fp.crossing_streams;
  } catch (const Error&) {
    // The package step ran, so the plan fitted; nothing to add otherwise.
  }
  r.package = p;
}

}  // namespace

report::FlowReport build_report(const FlowConfig& c, const fs::path& dir, const std::vector<StepOutcome>& steps,
                                const std::string& date) {
  report::FlowReport r;
  r.header.flow = c.name;
  r.header.network = c.network;
  r.header.device = c.device;
  r.header.budget = c.budget;
  r.header.fps_target = c.target_fps;
  r.header.date = date;
  const Artefacts art{try_json(dir / "simulate/analysis.json"), try_json(dir / "simulate/simulate.json"),
                      try_json(dir / "cosim/cosim.json"), try_json(dir / "search/summary.json")};
  if (art.analysis) r.header.clock_mhz = num(*art.analysis, "clock_mhz");
  fill_headline(r, art, dir);
  fill_layers(r, art, dir);
  fill_search(r, c, art, dir);
  fill_agreement(r, art);
  fill_package(r, c, dir);
  for (const auto& s : steps) {
    report::Step x;
    x.name = s.name;
    x.status = s.status;
    if (s.status != report::StepStatus::not_run) x.wall_seconds = s.seconds;
    x.summary = s.summary;
    r.steps.push_back(x);
  }
  return r;
}

void write_report(const report::FlowReport& r, const fs::path& dir) {
  write_file_atomic(dir / "report.json", report::to_json(r));
  write_file_atomic(dir / "report.html", report::to_html(r));
}

}  // namespace mixtd::flow
