#include "DesignReport.h"

#include "Table.h"

namespace mixtd::cli {

namespace {

std::string psi_str(const std::vector<arch::Psi>& psi) {
  std::string s;
  for (const auto& p : psi) {
    if (!s.empty()) s += " ";
    s += std::to_string(p.p_in) + "/" + std::to_string(p.p_out) + "/" + std::to_string(p.fine);
  }
  return s;
}

std::string tau_str(const arch::LayerReport& l) {
  if (l.kind != "conv2d") return l.kind == "linear" ? "fc" : "";
  if (!l.tau.decomposed()) return "none";
  std::string t(td::to_string(l.tau.type));
  t += " r" + std::to_string(l.tau.rank);
  if (l.tau.g1 > 1 || l.tau.g2 > 1) t += " g" + std::to_string(l.tau.g1) + "x" + std::to_string(l.tau.g2);
  return t;
}

std::string pct(double used, double avail) { return avail > 0 ? fixed(100.0 * used / avail, 1) + "%" : "-"; }

}  // namespace

void print_design_report(const arch::Design& d, const arch::Report& r, std::ostream& out) {
  Table t;
  t.add_column("layer", Table::Align::Left);
  t.add_column("tau", Table::Align::Left);
  t.add_column("p_in/p_out/fine", Table::Align::Left);
  t.add_column("cycles");
  t.add_column("");
  t.add_column("DSP");
  t.add_column("BRAM18");
  t.add_column("URAM");
  t.add_column("LUT");
  for (const auto& l : r.layers) {
    if (l.interval == 0 && l.resources.lut == 0) continue;  // fused ReLU, flatten: no module
    t.add_row({l.layer, tau_str(l), psi_str(l.psi), with_commas(l.interval), l.bottleneck ? "<- bottleneck" : "",
               with_commas(static_cast<std::int64_t>(l.resources.dsp)),
               with_commas(static_cast<std::int64_t>(l.resources.bram18)),
               with_commas(static_cast<std::int64_t>(l.resources.uram)),
               with_commas(static_cast<std::int64_t>(l.resources.lut))});
  }
  t.add_rule();
  t.add_row({"total", "", "", with_commas(r.interval), "", with_commas(static_cast<std::int64_t>(r.total.dsp)),
             with_commas(static_cast<std::int64_t>(r.total.bram18)),
             with_commas(static_cast<std::int64_t>(r.total.uram)),
             with_commas(static_cast<std::int64_t>(r.total.lut))});
  t.add_row({"device " + d.device.name, "", "", "", "", with_commas(static_cast<std::int64_t>(r.available.dsp)),
             with_commas(static_cast<std::int64_t>(r.available.bram18)),
             with_commas(static_cast<std::int64_t>(r.available.uram)),
             with_commas(static_cast<std::int64_t>(r.available.lut))});
  t.add_row({"utilisation", "", "", "", "", pct(r.total.dsp, r.available.dsp), pct(r.total.bram18, r.available.bram18),
             pct(r.total.uram, r.available.uram), pct(r.total.lut, r.available.lut)});
  out << "design " << d.name << ": " << d.network.name << " on " << d.device.name << " at " << fixed(d.clock_mhz, 0)
      << " MHz, W" << d.bits.weight << "A" << d.bits.activation << "\n\n";
  t.print(out);
  const auto& bm = r.graph.modules.at(static_cast<std::size_t>(r.bottleneck));
  out << "\ninterval " << with_commas(r.interval) << " cycles (bottleneck " << bm.name << "), fill "
      << with_commas(r.fill_cycles) << " cycles\n"
      << "batch 1: latency " << fixed(r.latency_ms(1), 3) << " ms, " << fixed(r.fps_batch1(), 1) << " FPS; peak "
      << fixed(r.fps_peak(), 1) << " FPS\n"
      << "weights " << fixed(r.weight_mbit, 2) << " Mb; FF " << with_commas(static_cast<std::int64_t>(r.total.ff))
      << " (" << pct(r.total.ff, r.available.ff) << "); budget " << fixed(100 * d.budget, 0)
      << "%: " << (r.fits() ? "fits" : "EXCEEDS (" + r.total.binding(r.budget) + ")") << "\n";
  for (const auto& w : r.warnings) out << "warning: " << w << "\n";
}

nlohmann::json design_report_json(const arch::Design& d, const arch::Report& r) {
  auto res = [](const arch::Resources& x) {
    return nlohmann::json{{"dsp", x.dsp}, {"bram18", x.bram18}, {"uram", x.uram}, {"lut", x.lut}, {"ff", x.ff}};
  };
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : r.layers) {
    nlohmann::json psi = nlohmann::json::array();
    for (const auto& p : l.psi) psi.push_back({p.p_in, p.p_out, p.fine});
    layers.push_back({{"layer", l.layer},
                      {"kind", l.kind},
                      {"tau", l.tau.str()},
                      {"psi", psi},
                      {"interval", l.interval},
                      {"slowest_module", l.slowest_module},
                      {"bottleneck", l.bottleneck},
                      {"resources", res(l.resources)},
                      {"weight_bits", l.weight_bits}});
  }
  return {{"design", d.name},
          {"network", d.network.name},
          {"device", d.device.name},
          {"clock_mhz", d.clock_mhz},
          {"interval_cycles", r.interval},
          {"fill_cycles", r.fill_cycles},
          {"latency_cycles_batch1", r.latency_cycles(1)},
          {"fps_batch1", r.fps_batch1()},
          {"fps_peak", r.fps_peak()},
          {"bottleneck", r.graph.modules.at(static_cast<std::size_t>(r.bottleneck)).name},
          {"weight_mbit", r.weight_mbit},
          {"resources", res(r.total)},
          {"available", res(r.available)},
          {"budget", res(r.budget)},
          {"fits", r.fits()},
          {"warnings", r.warnings},
          {"layers", layers}};
}

}  // namespace mixtd::cli
