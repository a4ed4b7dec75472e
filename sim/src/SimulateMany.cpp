// simulate_many: many designs, each simulated in its own child process, on
// the process's job back end (sim/JobBackend.h) — forked children here, or
// MPI worker ranks (cluster/) — through one job kind, "simulate", whose
// payload carries the design as design.yaml text and the options. The local
// pool and MPI run the same handler on the same payload.
#include <filesystem>

#include "mixtd/sim/JobBackend.h"
#include "mixtd/sim/Simulate.h"
#include "mixtd/sim/WorkerPool.h"
#include "mixtd/support/Error.h"

namespace mixtd::sim {

namespace {

namespace fs = std::filesystem;

constexpr const char* kSimulateJob = "simulate";

// A network or device spec that names a file, as an absolute path: a worker
// may run in another folder (or on another node with the same shared folder).
std::string portable_spec(const std::string& spec) {
  const std::string ext = fs::path(spec).extension().string();
  if (ext != ".yaml" && ext != ".yml" && ext != ".onnx") return spec;  // a zoo or device name
  return fs::absolute(spec).lexically_normal().string();
}

std::string simulate_payload(const arch::Design& design, const SimOptions& o) {
  nlohmann::json j = design_to_job(design);
  j["frames"] = o.frames;
  j["cycle_limit"] = o.cycle_limit;
  j["quantum"] = o.quantum;
  j["stall_probability"] = o.stall_probability;
  j["seed"] = o.seed;
  return j.dump();
}

std::string simulate_job(const std::string& payload) {
  const auto j = nlohmann::json::parse(payload);
  const arch::Design d = design_from_job(j);
  SimOptions o;
  o.frames = j.at("frames").get<std::int64_t>();
  o.cycle_limit = j.at("cycle_limit").get<std::int64_t>();
  o.quantum = j.at("quantum").get<std::int64_t>();
  o.stall_probability = j.at("stall_probability").get<double>();
  o.seed = j.at("seed").get<std::uint64_t>();
  return to_json(simulate(d, o)).dump();
}

// Registered while this translation unit initialises: every program that can
// call simulate_many links it, so every rank of such a program can run it.
const bool kRegistered = (register_job_kind(kSimulateJob, &simulate_job), true);

// Options that the payload carries in full. The rest (functional data, a
// trace file, recorded streams, a progress callback) live in the caller's
// memory, so those runs stay in a local child.
bool portable(const SimOptions& o) {
  return !o.functional && o.trace_path.empty() && !o.record_streams && !o.progress && o.data.empty();
}

SimResult failed(const arch::Design& d, const JobResult& r) {
  SimResult out;
  out.design = d.name;
  out.error = std::string("simulation ") + to_string(r.status) + ": " + r.error;
  return out;
}

}  // namespace

nlohmann::json design_to_job(const arch::Design& design) {
  arch::Design d = design;
  d.network_spec = portable_spec(design.network_path());
  d.device_spec = portable_spec(design.device_spec);
  if (!d.factors_spec.empty()) d.factors_spec = fs::absolute(design.factors_path()).lexically_normal().string();
  nlohmann::json j;
  j["design"] = arch::to_yaml(d);
  j["network"] = design.network.name;  // checked by the receiver: it read the same files
  j["device"] = design.device.name;
  return j;
}

arch::Design design_from_job(const nlohmann::json& j) {
  arch::Design d = arch::parse_design(j.at("design").get<std::string>(), "the job's design", fs::current_path());
  const std::string net = j.at("network").get<std::string>(), dev = j.at("device").get<std::string>();
  if (d.network.name != net || d.device.name != dev)
    throw Error("this worker read network '" + d.network.name + "' and device '" + d.device.name +
                "' where the submitting process had '" + net + "' and '" + dev +
                "' (do all ranks see the same files?)");
  return d;
}

std::vector<SimResult> simulate_many(const std::vector<arch::Design>& designs, const SimOptions& options, int jobs,
                                     double timeout_s) {
  (void)kRegistered;
  PoolOptions po;
  po.jobs = jobs;
  po.timeout_s = timeout_s;
  std::vector<JobResult> results;
  if (portable(options)) {
    std::vector<std::string> payloads;
    payloads.reserve(designs.size());
    for (const auto& d : designs) payloads.push_back(simulate_payload(d, options));
    results = job_backend().run(kSimulateJob, payloads, po);
  } else {
    results = run_pool(
        designs.size(), [&](std::size_t i) { return to_json(simulate(designs[i], options)).dump(); }, po);
  }
  std::vector<SimResult> out;
  for (const auto& r : results)
    out.push_back(r.ok() ? result_from_json(nlohmann::json::parse(r.output)) : failed(designs[r.index], r));
  return out;
}

SimResult simulate_isolated(const arch::Design& d, const SimOptions& options, double timeout_s) {
  return simulate_many({d}, options, 1, timeout_s).front();
}

}  // namespace mixtd::sim
