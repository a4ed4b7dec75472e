// Where the expensive, independent jobs of a run execute: here, in forked
// children (the local pool, run_pool), or on other processes that share only
// the program and the files (the MPI ranks of cluster/). Callers such as
// simulate_many describe a job as a registered kind and a payload string and
// never learn which back end ran it.
//
// Why kinds and payloads rather than closures: a closure cannot cross a
// process boundary. Every rank runs the same executable, so a kind registered
// in this program names the same handler everywhere, and the payload carries
// everything else. The local pool runs the very same handler on the very same
// payload, so the two back ends compute byte-identical results by
// construction; only where the child process runs differs.
//
// This header's code does not depend on SystemC (it lives in mixtd_sim_pool).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mixtd/sim/WorkerPool.h"

namespace mixtd::sim {

// Turns a payload into the job's result; runs in a forked child, so it may
// elaborate SystemC, throw (a failed job) or crash (a crashed job).
using JobHandler = std::string (*)(const std::string& payload);

// Registers `kind` (once; a second registration of the same kind throws).
// Libraries register their kinds during static initialisation of the
// translation unit that also submits them, so every binary that can submit
// a kind can run it.
void register_job_kind(const std::string& kind, JobHandler handler);

// Runs `kind`'s handler on `payload` in this process. Throws mixtd::Error
// naming the registered kinds if `kind` is unknown.
std::string run_job(const std::string& kind, const std::string& payload);

class JobBackend {
 public:
  virtual ~JobBackend() = default;
  // "local (2 jobs at once)", "mpi (3 workers)": for progress lines.
  virtual std::string describe(int requested_jobs) const = 0;
  // How many jobs run at once when a caller asks for `requested_jobs`
  // (0 = one per core); callers size their batches by it.
  virtual int slots(int requested_jobs) const = 0;
  // Runs every payload through `kind`'s handler, each in its own child
  // process; one result per payload, ordered by index, as run_pool returns
  // them. options.jobs is a request the back end may ignore (MPI runs one
  // job per worker rank); timeout_s and on_done mean what they mean for
  // run_pool.
  virtual std::vector<JobResult> run(const std::string& kind, const std::vector<std::string>& payloads,
                                     const PoolOptions& options) = 0;
};

// The local pool: run_pool over the handler.
class LocalBackend : public JobBackend {
 public:
  std::string describe(int requested_jobs) const override;
  int slots(int requested_jobs) const override;
  std::vector<JobResult> run(const std::string& kind, const std::vector<std::string>& payloads,
                             const PoolOptions& options) override;
};

// The process's back end: a LocalBackend unless one was installed.
JobBackend& job_backend();

// Installs `backend` for this process (nullptr: back to the local pool).
// The tools install the MPI back end on rank 0 for the length of a command.
void set_job_backend(std::shared_ptr<JobBackend> backend);

}  // namespace mixtd::sim
