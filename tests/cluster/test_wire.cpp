// The MPI back end's two messages survive packing, and a cut or padded
// message is a clear error, not a wrong result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mixtd/cluster/Wire.h"
#include "mixtd/support/Error.h"

using namespace mixtd;
using ::testing::HasSubstr;

TEST(ClusterWire, JobRoundTripsWithBinaryPayload) {
  cluster::JobMessage j{"simulate", std::string("a\0b\xff{\"x\":1}", 10), 12.5};
  const auto back = cluster::unpack_job(cluster::pack(j));
  EXPECT_EQ(back.kind, "simulate");
  EXPECT_EQ(back.payload, j.payload);
  EXPECT_EQ(back.timeout_s, 12.5);
}

TEST(ClusterWire, EveryResultStatusRoundTrips) {
  for (auto status : {sim::JobResult::Status::Ok, sim::JobResult::Status::Failed, sim::JobResult::Status::Crashed,
                      sim::JobResult::Status::TimedOut}) {
    sim::JobResult r;
    r.index = 99;  // not sent: rank 0 knows which job it handed out
    r.status = status;
    r.exit_code = -1;
    r.signal = 9;
    r.output = std::string(3 << 20, 'x');  // a few MB, as a functional result can be
    r.error = "killed by signal 9\nstderr:\ntail";
    r.seconds = 1.25;
    const auto back = cluster::unpack_result(cluster::pack(r));
    EXPECT_EQ(back.status, status);
    EXPECT_EQ(back.exit_code, -1);
    EXPECT_EQ(back.signal, 9);
    EXPECT_EQ(back.output, r.output);
    EXPECT_EQ(back.error, r.error);
    EXPECT_EQ(back.seconds, 1.25);
    EXPECT_EQ(back.index, 0u);
  }
}

TEST(ClusterWire, CutPaddedOrForeignMessagesAreErrors) {
  const std::string job = cluster::pack(cluster::JobMessage{"simulate", "{}", 0});
  for (std::size_t n : {std::size_t{0}, std::size_t{7}, job.size() - 1}) {
    try {
      cluster::unpack_job(job.substr(0, n));
      FAIL() << n;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("cut short")) << n;
    }
  }
  try {
    cluster::unpack_job(job + "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("1 trailing bytes"));
  }
  sim::JobResult r;
  std::string bytes = cluster::pack(r);
  bytes[0] = 7;  // status 7
  try {
    cluster::unpack_result(bytes);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("status 7 (legal 0..3)"));
  }
}
