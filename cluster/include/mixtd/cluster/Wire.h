// The two messages the MPI back end sends, as bytes: a job (rank 0 to a
// worker) and its result (back). Kept apart from MPI so that the format is
// tested in every build, with or without MPI.
#pragma once

#include <string>

#include "mixtd/sim/WorkerPool.h"

namespace mixtd::cluster {

struct JobMessage {
  std::string kind;      // a kind registered with sim::register_job_kind
  std::string payload;   // its input
  double timeout_s = 0;  // per job, 0 = none (sim::PoolOptions::timeout_s)
};

std::string pack(const JobMessage& job);
JobMessage unpack_job(const std::string& bytes);  // throws mixtd::Error on a short or malformed message

// Every field of the result but `index` (rank 0 knows which job it sent).
std::string pack(const sim::JobResult& result);
sim::JobResult unpack_result(const std::string& bytes);

}  // namespace mixtd::cluster
