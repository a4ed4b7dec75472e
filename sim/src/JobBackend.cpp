#include "mixtd/sim/JobBackend.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "mixtd/support/Error.h"

namespace mixtd::sim {

namespace {

std::map<std::string, JobHandler>& registry() {
  static std::map<std::string, JobHandler> kinds;
  return kinds;
}

std::mutex& backend_mutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<JobBackend>& installed() {
  static std::shared_ptr<JobBackend> b;
  return b;
}

}  // namespace

void register_job_kind(const std::string& kind, JobHandler handler) {
  require(handler != nullptr, "register_job_kind: no handler for '" + kind + "'");
  require(registry().emplace(kind, handler).second, "register_job_kind: '" + kind + "' is registered twice");
}

std::string run_job(const std::string& kind, const std::string& payload) {
  const auto it = registry().find(kind);
  if (it == registry().end()) {
    std::string known;
    for (const auto& [k, h] : registry()) known += (known.empty() ? "" : ", ") + k;
    throw Error("unknown job kind '" + kind + "' (this program runs: " + (known.empty() ? "none" : known) + ")");
  }
  return it->second(payload);
}

int LocalBackend::slots(int requested_jobs) const {
  return requested_jobs > 0 ? requested_jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::string LocalBackend::describe(int requested_jobs) const {
  return "local (" + std::to_string(slots(requested_jobs)) + " jobs at once)";
}

std::vector<JobResult> LocalBackend::run(const std::string& kind, const std::vector<std::string>& payloads,
                                         const PoolOptions& options) {
  return run_pool(
      payloads.size(), [&](std::size_t i) { return run_job(kind, payloads[i]); }, options);
}

JobBackend& job_backend() {
  static LocalBackend local;
  std::lock_guard<std::mutex> lock(backend_mutex());
  return installed() ? *installed() : local;
}

void set_job_backend(std::shared_ptr<JobBackend> backend) {
  std::lock_guard<std::mutex> lock(backend_mutex());
  installed() = std::move(backend);
}

}  // namespace mixtd::sim
