#include "MpiRun.h"

#include <cstdio>

namespace mixtd::cli {

void add_mpi_flag(CLI::App* cmd, bool& flag) {
  cmd->add_flag("--mpi", flag,
                "run the simulations on MPI ranks: start with `mpirun -n N` (rank 0 coordinates and writes every "
                "file, ranks 1..N-1 simulate; results equal a local run's; docs/scale.md)");
}

MpiRun::MpiRun(bool enabled, const std::string& command) {
  if (!enabled) return;
  session_ = std::make_unique<cluster::MpiSession>(command);
  if (session_->rank() == 0) {
    std::fprintf(stderr, "mpi: %s\n", session_->describe().c_str());
    sim::set_job_backend(session_->backend());
  }
}

MpiRun::~MpiRun() {
  if (session_ && session_->rank() == 0) sim::set_job_backend(nullptr);
}

int MpiRun::serve() {
  session_->serve();
  return 0;
}

}  // namespace mixtd::cli
