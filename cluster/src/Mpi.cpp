#include "mixtd/cluster/Mpi.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "mixtd/support/Error.h"

#ifdef MIXTD_HAVE_MPI
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "mixtd/cluster/Wire.h"
#endif

namespace mixtd::cluster {

bool launched_by_mpi() {
  // Open MPI's mpirun, MPICH/Hydra and Slurm (PMI-1/2), PMIx (srun --mpi=pmix).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

std::string MpiSession::describe() const {
  const std::set<std::string> distinct(hosts_.begin(), hosts_.end());
  std::string names;
  for (const auto& h : distinct) names += (names.empty() ? "" : ", ") + h;
  return std::to_string(workers()) + " worker" + (workers() == 1 ? "" : "s") + " on " +
         std::to_string(distinct.size()) + " host" + (distinct.size() == 1 ? "" : "s") + " (" + names + ")";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

std::string summary(const MpiStats& s, double wall_s, double cpu_s) {
  const double n = static_cast<double>(std::max<std::int64_t>(s.jobs, 1));
  char line[320];
  std::snprintf(line, sizeof line,
                "%lld jobs; per job %.1f KB out, %.1f KB back; rank 0: %.1f ms CPU per job (%.2f s in all), %.1f s "
                "of %.1f s wall outside the back end",
                static_cast<long long>(s.jobs), static_cast<double>(s.bytes_out) / n / 1024,
                static_cast<double>(s.bytes_back) / n / 1024, cpu_s / n * 1000, cpu_s, wall_s - s.backend_s, wall_s);
  return line;
}

#ifndef MIXTD_HAVE_MPI

bool mpi_built() { return false; }

MpiSession::MpiSession(const std::string& command) {
  throw Error(
      "--mpi: this mixtd was built without MPI (CMake found no MPI when it configured: install "
      "libopenmpi-dev and openmpi-bin, or run scripts/setup, then rebuild); run `mixtd " +
      command + "` without --mpi to use the local pool (--jobs)");
}
MpiSession::~MpiSession() = default;
void MpiSession::serve() {}
std::shared_ptr<sim::JobBackend> MpiSession::backend() { return nullptr; }

#else

bool mpi_built() { return true; }

namespace {

constexpr int kJobTag = 1, kResultTag = 2, kStopTag = 3;

// MPI_Probe spins a core while it waits; on a machine shared with the
// workers' own children that core is what they need. Polling with a sleep
// that grows to 200 µs costs a job at most that much latency on each side
// and an idle rank about 5,000 wake-ups a second (well under 1% of a core).
MPI_Status wait_for_message(int source, int tag) {
  auto sleep = std::chrono::microseconds(20);
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &st);
    if (flag) return st;
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(200));
  }
}

std::string receive(const MPI_Status& st) {
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  std::string bytes(static_cast<std::size_t>(count), '\0');
  MPI_Recv(bytes.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

void send(const std::string& bytes, int dest, int tag) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Error("mpi: a message of " + std::to_string(bytes.size()) + " bytes is larger than MPI's 2 GiB count");
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

// Rank 0's side: hands out jobs, one per worker at a time, the next to
// whichever worker answers first.
class MpiBackend : public sim::JobBackend {
 public:
  MpiBackend(int workers, std::shared_ptr<MpiStats> stats) : workers_(workers), stats_(std::move(stats)) {}

  std::string describe(int) const override { return "mpi (" + std::to_string(workers_) + " workers)"; }
  int slots(int) const override { return workers_; }

  std::vector<sim::JobResult> run(const std::string& kind, const std::vector<std::string>& payloads,
                                  const sim::PoolOptions& options) override {
    std::vector<sim::JobResult> results(payloads.size());
    std::vector<std::ptrdiff_t> running(static_cast<std::size_t>(workers_) + 1, -1);  // job per rank
    std::size_t next = 0, done = 0;
    int busy = 0;
    const auto t0 = std::chrono::steady_clock::now();
    struct Clock {  // time spent in here, however run() ends
      MpiStats& stats;
      std::chrono::steady_clock::time_point t0;
      ~Clock() { stats.backend_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    } clock{*stats_, t0};
    auto hand_out = [&](int rank) {
      const std::string bytes = pack(JobMessage{kind, payloads[next], options.timeout_s});
      send(bytes, rank, kJobTag);
      stats_->bytes_out += bytes.size();
      ++stats_->jobs;
      running[static_cast<std::size_t>(rank)] = static_cast<std::ptrdiff_t>(next++);
      ++busy;
    };
    try {
      for (int rank = 1; rank <= workers_ && next < payloads.size(); ++rank) hand_out(rank);
      while (busy > 0) {
        const MPI_Status st = wait_for_message(MPI_ANY_SOURCE, kResultTag);
        const std::string bytes = receive(st);
        stats_->bytes_back += bytes.size();
        sim::JobResult r = unpack_result(bytes);
        auto& slot = running[static_cast<std::size_t>(st.MPI_SOURCE)];
        r.index = static_cast<std::size_t>(slot);
        slot = -1;
        --busy;
        ++done;
        if (next < payloads.size()) hand_out(st.MPI_SOURCE);
        const std::size_t index = r.index;
        results[index] = std::move(r);
        if (options.on_done) options.on_done(results[index], done, payloads.size());
      }
    } catch (...) {
      // Collect what the busy workers send, so that none is left blocked in
      // a send when rank 0 stops them.
      while (busy > 0) {
        const MPI_Status st = wait_for_message(MPI_ANY_SOURCE, kResultTag);
        (void)receive(st);
        --busy;
      }
      throw;
    }
    return results;
  }

 private:
  int workers_;
  std::shared_ptr<MpiStats> stats_;
};

}  // namespace

MpiSession::MpiSession(const std::string& command) : stats_(std::make_shared<MpiStats>()) {
  if (!launched_by_mpi())
    throw Error("--mpi: this process was not started by mpirun (or srun): run it as `mpirun -n N mixtd " + command +
                " … --mpi` (N-1 workers; rank 0 coordinates), or drop --mpi to use the local pool (--jobs)");
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) throw Error("--mpi: MPI is already initialised in this process");
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < size_; ++r)
    hosts_.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  if (size_ < 2) {
    MPI_Finalize();
    throw Error(
        "--mpi: mpirun started 1 rank, and rank 0 only coordinates: start at least 2 (`mpirun -n 3` gives "
        "2 workers)");
  }
}

MpiSession::~MpiSession() {
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, kStopTag, MPI_COMM_WORLD);
    if (stats_->jobs > 0)
      std::fprintf(stderr, "mpi: %s\n", summary(*stats_, seconds_since(started_), cpu_seconds()).c_str());
  }
  MPI_Finalize();
}

void MpiSession::serve() {
  require(rank_ != 0, "mpi: rank 0 coordinates and does not serve jobs");
  for (;;) {
    const MPI_Status st = wait_for_message(0, MPI_ANY_TAG);
    const std::string bytes = receive(st);
    if (st.MPI_TAG == kStopTag) return;
    sim::JobResult r;
    try {
      const JobMessage job = unpack_job(bytes);
      sim::PoolOptions po;
      po.jobs = 1;
      po.timeout_s = job.timeout_s;
      // The same child the local pool would fork for this job.
      r = sim::run_pool(
              1, [&](std::size_t) { return sim::run_job(job.kind, job.payload); }, po)
              .front();
    } catch (const std::exception& e) {
      r.status = sim::JobResult::Status::Failed;
      r.error = std::string("on rank ") + std::to_string(rank_) + ": " + e.what();
    }
    send(pack(r), 0, kResultTag);
  }
}

std::shared_ptr<sim::JobBackend> MpiSession::backend() {
  require(rank_ == 0, "mpi: only rank 0 submits jobs");
  return std::make_shared<MpiBackend>(workers(), stats_);
}

#endif

}  // namespace mixtd::cluster
