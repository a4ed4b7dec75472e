#include "mixtd/hls/Floorplan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>

#include "mixtd/arch/Graph.h"
#include "mixtd/rtl/DesignResources.h"
#include "mixtd/support/Error.h"

namespace mixtd::hls {

namespace {

// The fullest resource of `r` as a fraction of `share`.
double fill(const arch::Resources& r, const arch::Resources& share) {
  return std::max(
      {r.dsp / share.dsp, r.bram18 / share.bram18, r.uram / share.uram, r.lut / share.lut, r.ff / share.ff});
}

std::string figures(const arch::Resources& r, const arch::Resources& s) {
  std::ostringstream o;
  o << "DSP " << r.dsp << "/" << s.dsp << ", BRAM18 " << r.bram18 << "/" << s.bram18 << ", URAM " << r.uram << "/"
    << s.uram << ", LUT " << r.lut << "/" << s.lut << ", FF " << r.ff << "/" << s.ff;
  return o.str();
}

}  // namespace

arch::Resources u250_slr_share() {
  arch::Resources s;
  s.lut = 345000;
  s.dsp = 2877;
  s.bram18 = 1000;  // 500 BRAM36
  s.uram = 320;
  s.ff = 690000;  // two per LUT, as on the device
  return s;
}

Floorplan plan_slrs(const arch::Design& d, const arch::Resources& share, int slrs) {
  require(slrs >= 1 && slrs <= 16, "floorplan: " + std::to_string(slrs) + " SLRs (legal 1..16)");
  const rtl::DesignResources res = rtl::design_resources(d);
  // Blocks in graph order; a stream's FIFOs go with their consumer, so
  // they follow the module they feed.
  const arch::Graph g = arch::build_graph(d);
  std::map<std::string, std::size_t> module_at;
  Floorplan f;
  for (const auto& row : res.rows)
    if (row.kind != "fifo" && row.kind != "repack" && !row.instances.empty()) {
      module_at[row.name] = f.blocks.size();
      f.blocks.push_back({row.name, row.instances, row.total, 0});
    }
  std::map<std::string, std::string> consumer_of;  // stream name -> consumer module
  for (const auto& s : g.streams) consumer_of[s.name] = g.modules[s.to].name;
  for (const auto& row : res.rows) {
    if (row.kind != "fifo" && row.kind != "repack") continue;
    const auto c = consumer_of.find(row.name);
    const auto at = c == consumer_of.end() ? module_at.end() : module_at.find(c->second);
    if (at == module_at.end()) continue;  // host streams: no logic
    SlrBlock& b = f.blocks[at->second];
    b.resources += row.total;
    b.instances.insert(b.instances.end(), row.instances.begin(), row.instances.end());
  }
  const std::size_t n = f.blocks.size();
  require(n > 0, "floorplan: design '" + d.name + "' has no blocks");
  std::vector<arch::Resources> prefix(n + 1);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + f.blocks[i].resources;
  auto range = [&](std::size_t a, std::size_t b) {  // blocks [a, b)
    const arch::Resources& hi = prefix[b];
    const arch::Resources& lo = prefix[a];
    return arch::Resources{hi.dsp - lo.dsp, hi.bram18 - lo.bram18, hi.uram - lo.uram, hi.lut - lo.lut, hi.ff - lo.ff};
  };
  // best[k][j]: the least fullest-SLR fill of blocks [0, j) in k SLRs.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(static_cast<std::size_t>(slrs) + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<std::size_t>> cut(best.size(), std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0;
  for (std::size_t k = 1; k <= static_cast<std::size_t>(slrs); ++k)
    for (std::size_t j = 0; j <= n; ++j)
      for (std::size_t i = 0; i <= j; ++i) {
        if (best[k - 1][i] == inf) continue;
        const double v = std::max(best[k - 1][i], fill(range(i, j), share));
        if (v < best[k][j]) {
          best[k][j] = v;
          cut[k][j] = i;
        }
      }
  // The fewest SLRs that fit (fewest streams crossing), each cut the one
  // that leaves the fullest SLR emptiest; all of them if none fits.
  std::size_t k = 1;
  while (k < static_cast<std::size_t>(slrs) && best[k][n] > 1.0) ++k;
  std::vector<std::size_t> starts(k);
  for (std::size_t j = n, kk = k; kk > 0; --kk) {
    starts[kk - 1] = cut[kk][j];
    j = cut[kk][j];
  }
  f.used.assign(k, arch::Resources{});
  for (std::size_t s = 0; s < k; ++s) {
    const std::size_t end = s + 1 < k ? starts[s + 1] : n;
    for (std::size_t i = starts[s]; i < end; ++i) {
      f.blocks[i].slr = static_cast<int>(s);
      f.used[s] += f.blocks[i].resources;
    }
  }
  for (std::size_t s = 0; s < k; ++s)
    require(fill(f.used[s], share) <= 1.0, "floorplan: design '" + d.name + "' does not fit " + std::to_string(slrs) +
                                               " SLRs along its pipeline: the best cut puts " + "SLR" +
                                               std::to_string(s) + " at " + figures(f.used[s], share) +
                                               " (solve it with a smaller --budget)");
  for (const auto& s : g.streams) {
    const auto a = module_at.find(g.modules[s.from].name), b = module_at.find(g.modules[s.to].name);
    if (a != module_at.end() && b != module_at.end() && f.blocks[a->second].slr != f.blocks[b->second].slr)
      f.crossing_streams.push_back(s.name);
  }
  return f;
}

std::map<std::string, int> instance_slrs(const Floorplan& f) {
  std::map<std::string, int> out;
  for (const auto& b : f.blocks)
    for (const auto& i : b.instances) out[i] = b.slr;
  return out;
}

std::string floorplan_tcl(const Floorplan& f, const std::string& hierarchy) {
  std::ostringstream s;
  s << "# Generated by mixtd package: one pblock per SLR, the kernel's blocks in pipeline order\n"
    << "# (hls/src/Floorplan.cpp). Streams crossing SLRs: " << f.crossing_streams.size() << ".\n";
  for (int k = 0; k < f.slrs_used(); ++k) {
    s << "create_pblock mixtd_slr" << k << "\nresize_pblock mixtd_slr" << k << " -add SLR" << k << "\n";
    for (const auto& b : f.blocks)
      if (b.slr == k)
        for (const auto& i : b.instances)
          s << "add_cells_to_pblock mixtd_slr" << k << " [get_cells -quiet -hierarchical -filter {NAME =~ " << hierarchy
            << "/" << i << "}]\n";
  }
  return s.str();
}

}  // namespace mixtd::hls
