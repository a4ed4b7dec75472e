// A build without MPI: the API exists, and asking for MPI is one clear line
// that says why and what to do instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mixtd/cluster/Mpi.h"
#include "mixtd/support/Error.h"

using namespace mixtd;
using ::testing::HasSubstr;

TEST(ClusterNoMpi, MpiFlagSaysTheBuildHasNoMpi) {
  EXPECT_FALSE(cluster::mpi_built());
  try {
    cluster::MpiSession s("dataset generate");
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_THAT(m, HasSubstr("built without MPI"));
    EXPECT_THAT(m, HasSubstr("libopenmpi-dev"));
    EXPECT_THAT(m, HasSubstr("`mixtd dataset generate` without --mpi"));
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}
