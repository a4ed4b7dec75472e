// Entry point for test binaries that link SystemC.
//
// libsystemc.so defines main() and calls sc_main(); linking gtest_main as
// well would leave one of the two mains unused and, with libsystemc's, run
// no tests at all. So SystemC test binaries get this sc_main instead.
#include <gtest/gtest.h>

#include <systemc>

int sc_main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
