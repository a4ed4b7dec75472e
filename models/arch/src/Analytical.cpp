#include "mixtd/arch/Analytical.h"

#include <map>

namespace mixtd::arch {

Report analyse(const Design& d) {
  validate(d);
  Report r;
  r.graph = build_graph(d);
  r.clock_mhz = d.clock_mhz;
  r.available = d.device.capacity;
  r.budget = d.device.capacity.scaled(d.budget);
  const auto& mods = r.graph.modules;
  const std::vector<Arrival> arr = arrivals(r.graph);
  r.fill.assign(mods.size(), 0);
  for (std::size_t i = 0; i < mods.size(); ++i) {
    r.fill[i] = arr[i].fill;
    const std::int64_t iv = mods[i].cycles.interval();
    if (iv > r.interval) {
      r.interval = iv;
      r.bottleneck = static_cast<int>(i);
    }
    r.total += mods[i].resources.scaled(static_cast<double>(mods[i].count));
  }
  // latency(1) = fill + interval with fill the longest path of module fills.
  // (The arrival curves' last word, arr.back().last, is what the simulator
  // agrees with; the solver's heuristics still target this figure.)
  r.fill_cycles = arr.empty() ? 0 : arr.back().fill;
  for (const auto& s : r.graph.streams) r.total += s.resources;

  // Per network layer, in network order.
  std::map<std::string, std::size_t> index;
  for (const auto& l : d.network.layers) {
    LayerReport lr;
    lr.layer = l.name;
    lr.kind = std::string(net::to_string(l.kind));
    if (auto it = d.layers.find(l.name); it != d.layers.end()) {
      lr.tau = it->second.tau;
      lr.psi = it->second.stages;
    }
    index[l.name] = r.layers.size();
    r.layers.push_back(std::move(lr));
  }
  for (std::size_t i = 0; i < mods.size(); ++i) {
    const auto& m = mods[i];
    auto it = index.find(m.layer);
    if (it == index.end()) continue;
    LayerReport& lr = r.layers[it->second];
    if (m.cycles.interval() > lr.interval) {
      lr.interval = m.cycles.interval();
      lr.slowest_module = m.name;
    }
    if (static_cast<int>(i) == r.bottleneck) lr.bottleneck = true;
    lr.resources += m.resources.scaled(static_cast<double>(m.count));
    for (int s : m.inputs) lr.resources += r.graph.streams[static_cast<std::size_t>(s)].resources;
    if (m.kind == ModuleKind::Stage)
      lr.weight_bits += static_cast<double>(m.shape.weight_count() * m.count * d.bits.weight);
  }
  double bits = 0;
  for (const auto& lr : r.layers) bits += lr.weight_bits;
  r.weight_mbit = bits / 1e6;
  return r;
}

}  // namespace mixtd::arch
