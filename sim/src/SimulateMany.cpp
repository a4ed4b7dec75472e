#include "mixtd/sim/Simulate.h"
#include "mixtd/sim/WorkerPool.h"

namespace mixtd::sim {

std::vector<SimResult> simulate_many(const std::vector<arch::Design>& designs, const SimOptions& options, int jobs,
                                     double timeout_s) {
  PoolOptions po;
  po.jobs = jobs;
  po.timeout_s = timeout_s;
  const auto results = run_pool(
      designs.size(), [&](std::size_t i) { return to_json(simulate(designs[i], options)).dump(); }, po);
  std::vector<SimResult> out;
  for (const auto& r : results) {
    if (r.ok()) {
      out.push_back(result_from_json(nlohmann::json::parse(r.output)));
      continue;
    }
    SimResult failed;
    failed.design = designs[r.index].name;
    failed.error = std::string("simulation ") + to_string(r.status) + ": " + r.error;
    out.push_back(failed);
  }
  return out;
}

SimResult simulate_isolated(const arch::Design& d, const SimOptions& options, double timeout_s) {
  return simulate_many({d}, options, 1, timeout_s).front();
}

}  // namespace mixtd::sim
