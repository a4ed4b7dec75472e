// The MPI back end (docs/scale.md): `mpirun -n N mixtd … --mpi` starts N
// copies of the same command. Rank 0 runs the command as it would run alone
// and owns every file it writes; ranks 1 … N-1 only serve jobs: each waits
// for a job (a kind and a payload, sim/JobBackend.h), runs it in a forked
// child exactly as the local pool would (a crashing design is a failed job,
// not a dead rank) and sends the result back. Scheduling is dynamic: rank 0
// hands the next job to whichever worker returns a result first.
//
// MPI is optional at build time: without it (no libopenmpi-dev when CMake
// ran) the same API exists and MpiSession's constructor throws, saying so.
//
// Faults: MPI ends the whole job when any rank dies. What survives is the
// run's own crash safety (the dataset's rows and the search's checkpoints are
// written by rank 0 atomically), so rerunning the same mpirun command resumes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mixtd/sim/JobBackend.h"

namespace mixtd::cluster {

// Was this mixtd built with MPI?
bool mpi_built();

// Did a launcher (mpirun/mpiexec, srun) start this process as one rank of
// several? Read from the launchers' environment variables, without MPI.
bool launched_by_mpi();

// What rank 0's back end did, for the line it prints at the end: the
// message sizes and rank 0's own work per job are what bound the scaling
// (docs/scale.md).
struct MpiStats {
  std::int64_t jobs = 0;
  std::uint64_t bytes_out = 0, bytes_back = 0;
  double backend_s = 0;  // wall time inside JobBackend::run (handing out, waiting)
};

// "24 jobs; per job 1.6 KB out, 0.3 KB back; rank 0: 1.2 ms CPU per job ...":
// `cpu_s` is rank 0's CPU time (start-up included), the cost that bounds how
// many workers one rank 0 can feed.
std::string summary(const MpiStats& stats, double wall_s, double cpu_s);
double cpu_seconds();  // this process's user + system time

class MpiSession {
 public:
  // Initialises MPI. Throws mixtd::Error with one line if this build has no
  // MPI, if no launcher started the process, or if there is only one rank.
  // `command` names the command for the messages ("dataset generate").
  explicit MpiSession(const std::string& command);
  // Rank 0 tells every worker to stop; every rank finalises MPI.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int workers() const { return size_ - 1; }
  // "3 workers on 2 hosts (node1, node2)".
  std::string describe() const;

  // Ranks other than 0: run jobs until rank 0 says stop.
  void serve();
  // Rank 0: the sim::JobBackend that sends jobs to the workers. Valid while
  // the session lives.
  std::shared_ptr<sim::JobBackend> backend();

 private:
  int rank_ = 0, size_ = 1;
  std::vector<std::string> hosts_;  // per rank
  std::shared_ptr<MpiStats> stats_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace mixtd::cluster
