// `--mpi` for the commands whose expensive jobs can run on MPI ranks
// (dataset generate, search; docs/scale.md). Every rank runs the same
// command line; the first thing the command does is construct an MpiRun:
//
//   MpiRun mpi(a->mpi, "dataset generate");
//   if (mpi.worker()) return mpi.serve();
//
// On rank 0 it installs the MPI job back end until the command returns, so
// the libraries' jobs go to the workers; on the other ranks serve() runs
// jobs until rank 0 is done. Without --mpi it does nothing.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "mixtd/cluster/Mpi.h"

namespace mixtd::cli {

// Adds the --mpi flag with its help text to `cmd`.
void add_mpi_flag(CLI::App* cmd, bool& flag);

class MpiRun {
 public:
  MpiRun(bool enabled, const std::string& command);
  ~MpiRun();
  MpiRun(const MpiRun&) = delete;
  MpiRun& operator=(const MpiRun&) = delete;

  bool worker() const { return session_ && session_->rank() != 0; }
  int serve();  // a worker's whole command; returns the exit code

 private:
  std::unique_ptr<cluster::MpiSession> session_;
};

}  // namespace mixtd::cli
