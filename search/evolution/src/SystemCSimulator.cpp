#include "mixtd/search/Search.h"
#include "mixtd/sim/Simulate.h"

namespace mixtd::search {

std::vector<SimLabel> SystemCSimulator::simulate(const std::vector<arch::Design>& designs) {
  std::vector<SimLabel> out;
  for (const auto& r : sim::simulate_many(designs, sim::SimOptions{}, jobs_, timeout_s_)) {
    SimLabel l;
    l.ok = r.completed && r.interval > 0 && !r.latency.empty();
    l.error = r.completed ? (l.ok ? "" : "no interval") : r.error;
    if (l.ok) {
      l.interval = static_cast<double>(r.interval);
      l.latency = static_cast<double>(r.latency.front());
      l.fps_batch1 = r.fps_batch1();
      l.fps_peak = r.fps_peak();
    }
    out.push_back(l);
  }
  return out;
}

}  // namespace mixtd::search
