#include "mixtd/arch/Analytical.h"

#include <algorithm>
#include <map>

#include "mixtd/arch/RowTimeline.h"

namespace mixtd::arch {

namespace {

// What the FIFO depths move: the resources of the whole design and of each
// layer (its modules and their input FIFOs, all instances), and the
// warnings about FIFOs shallower than their fan-out needs.
void tally(Report& r) {
  const auto& mods = r.graph.modules;
  std::map<std::string, std::size_t> index;
  for (std::size_t l = 0; l < r.layers.size(); ++l) index[r.layers[l].layer] = l;
  r.total = {};
  for (auto& lr : r.layers) lr.resources = {};
  for (const auto& m : mods) r.total += m.resources.scaled(static_cast<double>(m.count));
  for (const auto& s : r.graph.streams) r.total += s.resources;
  for (const auto& m : mods) {
    auto it = index.find(m.layer);
    if (it == index.end()) continue;
    LayerReport& lr = r.layers[it->second];
    lr.resources += m.resources.scaled(static_cast<double>(m.count));
    for (int s : m.inputs) lr.resources += r.graph.streams[static_cast<std::size_t>(s)].resources;
  }
  r.warnings.clear();
  const auto& need = r.fifo_need;
  for (std::size_t s = 0; s < need.size(); ++s)
    if (need[s] > r.graph.streams[s].depth)
      r.warnings.push_back("FIFO '" + r.graph.streams[s].name + "' holds " + std::to_string(r.graph.streams[s].depth) +
                           " beats; its fan-out needs " + std::to_string(need[s]) +
                           " to run at the interval (`mixtd solve` sizes it; or set fifo_depths)");
}

}  // namespace

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
  }
  // latency(1) = fill + interval: the last output word of the row-level
  // timeline (RowTimeline.h), which the simulator agrees with within 5%
  // (tests/sim/test_agreement.cpp). The solver optimises this same
  // latency, kept up to date incrementally (RowTimelineTracker).
  r.fill_cycles = std::max<std::int64_t>(0, row_timeline(r.graph).latency - r.interval);
  r.fifo_need = fan_out_fifo_depths(r.graph, r.interval, d.fifo_depth);

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
    if (m.kind == ModuleKind::Stage)
      lr.weight_bits += static_cast<double>(m.shape.weight_count() * m.count * d.bits.weight);
  }
  double bits = 0;
  for (const auto& lr : r.layers) bits += lr.weight_bits;
  r.weight_mbit = bits / 1e6;
  tally(r);
  return r;
}

namespace {

// Raises, in d and in g, every stream's depth to what it needs.
int raise_depths(Design& d, Graph& g, const std::vector<std::int64_t>& need) {
  int raised = 0;
  for (std::size_t s = 0; s < g.streams.size(); ++s) {
    if (need[s] <= g.streams[s].depth) continue;
    d.fifo_depths[g.streams[s].name] = need[s];
    g.streams[s].depth = need[s];
    ++raised;
  }
  return raised;
}

}  // namespace

int size_fifos(Design& d) {
  validate(d);
  Graph g = build_graph(d);
  std::int64_t interval = 0;
  for (const auto& m : g.modules) interval = std::max(interval, m.cycles.interval());
  return raise_depths(d, g, fan_out_fifo_depths(g, interval, d.fifo_depth));
}

int size_fifos(Design& d, Report& r) {
  const int raised = raise_depths(d, r.graph, r.fifo_need);
  if (raised == 0) return 0;
  // The depths change resources only (not a cycle): re-price the streams
  // and tally again, rather than analyse() anew.
  for (Stream& st : r.graph.streams) st.resources = stream_resources(r.graph, st, d.bits);
  tally(r);
  return raised;
}

}  // namespace mixtd::arch
