// `mixtd package`: the U250 deployment folder of a design (issue 22,
// docs/deploy.md) — the RTL kernel (the generated design inside the kernel
// top of KernelInterface.h), kernel.xml, the Vivado Tcl that packages it,
// the HLS data movers, the v++ link config, a Makefile with the tools
// pinned, the XRT host program, and frames with the golden executor's
// outputs to check a board against.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/rtl/Generator.h"
#include "mixtd/sim/Functional.h"

namespace mixtd::hls {

struct Platform {
  std::string name;
  std::string part;    // the FPGA part Vivado packages the kernel for
  double max_mhz = 0;  // the platform's kernel clock limit
};

// The U250 platforms the package knows (Vitis 2022.1/2022.2 shells).
const std::vector<Platform>& platforms();
// Throws mixtd::Error naming the legal platforms.
const Platform& find_platform(const std::string& name);

struct PackageOptions {
  std::string platform = "xilinx_u250_gen3x16_xdma_4_1_202210_1";
  double kernel_mhz = 0;     // 0: the design's clock
  std::int64_t frames = 16;  // frames in data/ (with their expected outputs)
  std::uint64_t seed = 1;    // calibration and frames, as gen-rtl and cosim
  sim::FunctionalData data;  // calibration and frames from a data set (else seeded)
};

// The package's files (paths relative to its folder), generated in memory:
// every check (platform, clock, the RTL generator's) runs before anything
// is written.
std::vector<rtl::GeneratedFile> make_package(const arch::Design& d, const PackageOptions& o);

// The binary files of data/: int8 frames in stream order, the golden
// outputs, labels (int64) if the data set has them.
struct PackageData {
  std::vector<std::int8_t> frames, expected;
  std::vector<std::int64_t> labels;
};
PackageData package_data(const arch::Design& d, const PackageOptions& o);

// Writes make_package's files and package_data's under `dir`: into a
// temporary folder beside it, renamed into place, so nothing the user had
// is half overwritten.
void write_package(const arch::Design& d, const PackageOptions& o, const std::filesystem::path& dir);

// The files shipped as they are (hls/movers, hls/host; embedded at build time).
const std::vector<rtl::GeneratedFile>& shipped_sources();

}  // namespace mixtd::hls
