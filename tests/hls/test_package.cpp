// `mixtd package` (issue 22): what can be checked of the U250 package
// without Vivado — kernel.xml well-formed (xmllint) and equal to the SV
// kernel's ports and the register map, every Tcl complete (tclsh), the link
// config's names present in kernel.xml and the movers, kernel_config.h the
// interface's numbers, the movers compiling against the C-simulation shim
// and the host against XRT's headers, bad options refused before writing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "SearchTestUtil.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/hls/Floorplan.h"
#include "mixtd/hls/KernelInterface.h"
#include "mixtd/hls/Package.h"
#include "mixtd/rtl/WeightStream.h"
#include "mixtd/search/Solver.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;
using testing::HasSubstr;

arch::Design tiny() {
  arch::Design d = search::solve(search::testing::zoo_design("tiny", "zc706")).design;
  arch::size_fifos(d);
  return d;
}

std::map<std::string, std::string> package_files(const arch::Design& d, const hls::PackageOptions& o = {}) {
  std::map<std::string, std::string> m;
  for (const auto& f : hls::make_package(d, o)) m[f.path] = f.text;
  return m;
}

int sh(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("mixtd_package_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d.parent_path());
  return d;
}

TEST(Package, KernelXmlIsWellFormedAndMatchesTheWrapper) {
  const arch::Design d = tiny();
  const auto files = package_files(d);
  const hls::KernelInterface k = hls::kernel_interface(rtl::generate(d, 1, {}, {rtl::WeightLoad::Stream, {}}));
  const fs::path dir = scratch("xml");
  fs::create_directories(dir);
  std::ofstream(dir / "kernel.xml") << files.at("kernel.xml");
  EXPECT_EQ(sh("xmllint --noout " + (dir / "kernel.xml").string()), 0);
  const std::string& xml = files.at("kernel.xml");
  const std::string& sv = files.at("rtl/mixtd_kernel.sv");
  // Every stream port: the same width in kernel.xml and on the SV module.
  const std::regex port(R"re(<port name="(\w+)" mode="(\w+)" (range="0x[0-9a-f]+" )?dataWidth="(\d+)")re");
  int streams = 0;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), port); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1], width = (*it)[4];
    if (name == "s_axi_control") {
      EXPECT_EQ(width, "32");
      EXPECT_THAT(sv, HasSubstr("[31:0] s_axi_control_wdata"));
      continue;
    }
    ++streams;
    EXPECT_THAT(sv, HasSubstr("[" + std::to_string(std::stoi(width) - 1) + ":0] " + name + "_tdata")) << name;
  }
  EXPECT_EQ(streams, 3);
  EXPECT_THAT(sv, HasSubstr("[63:0] s_axis_weights_tdata"));
  EXPECT_THAT(xml, HasSubstr("<arg name=\"frames\" addressQualifier=\"0\" id=\"0\" port=\"s_axi_control\" "
                             "size=\"0x4\" offset=\"0x10\""));
  EXPECT_THAT(xml, HasSubstr("dataWidth=\"" + std::to_string(k.in.tdata_bits()) + "\""));
  EXPECT_THAT(xml, HasSubstr("hwControlProtocol=\"ap_ctrl_hs\""));
  // The register map in the IP's Tcl: every register at its offset.
  for (const auto& r : k.registers()) {
    char off[16];
    std::snprintf(off, sizeof off, "0x%x", r.offset);
    EXPECT_THAT(files.at("package_kernel.tcl"),
                HasSubstr("ipx::add_register -quiet " + r.name + " $block]\nset_property address_offset " + off))
        << r.name;
  }
}

TEST(Package, TclIsCompleteAndLinkNamesExist) {
  const auto files = package_files(tiny());
  const fs::path dir = scratch("tcl");
  fs::create_directories(dir);
  for (const char* t : {"package_kernel.tcl", "gen_xo.tcl"}) {
    std::ofstream(dir / t) << files.at(t);
    const std::string cmd = "echo 'if {![info complete [read [open " + (dir / t).string() + "]]]} {exit 1}' | tclsh";
    EXPECT_EQ(sh(cmd), 0) << t;
  }
  const std::string& link = files.at("link.cfg");
  const std::string& xml = files.at("kernel.xml");
  const std::regex sc(R"(stream_connect=(\w+)\.(\w+):(\w+)\.(\w+))");
  const std::map<std::string, std::string> source = {{"mm2s", files.at("hls/mixtd_mm2s.cpp")},
                                                     {"mm2s_weights", files.at("hls/mixtd_mm2s_weights.cpp")},
                                                     {"s2mm", files.at("hls/mixtd_s2mm.cpp")}};
  int n = 0;
  for (auto it = std::sregex_iterator(link.begin(), link.end(), sc); it != std::sregex_iterator(); ++it, ++n)
    for (int side : {1, 3}) {
      const std::string inst = (*it)[side], port = (*it)[side + 1];
      if (inst == "kernel")
        EXPECT_THAT(xml, HasSubstr("<port name=\"" + port + "\"")) << port;
      else
        EXPECT_TRUE(std::regex_search(source.at(inst), std::regex("&\\s*" + port + "\\b"))) << inst << "." << port;
    }
  EXPECT_EQ(n, 3);
  for (const char* nk : {"nk=mixtd_mm2s:1:mm2s", "nk=mixtd_mm2s_weights:1:mm2s_weights", "nk=mixtd_kernel:1:kernel",
                         "nk=mixtd_s2mm:1:s2mm"})
    EXPECT_THAT(link, HasSubstr(nk));
  EXPECT_TRUE(std::regex_search(source.at("mm2s"), std::regex(R"(mixtd_mm2s\s*\(\s*const ap_uint<512>\s*\*\s*mem)")));
}

TEST(Package, KernelConfigIsTheInterface) {
  const arch::Design d = tiny();
  const auto files = package_files(d);
  const hls::KernelInterface k = hls::kernel_interface(rtl::generate(d, 1, {}, {rtl::WeightLoad::Stream, {}}));
  const std::string& h = files.at("include/kernel_config.h");
  EXPECT_THAT(h, HasSubstr("#define MIXTD_IN_TDATA_BITS " + std::to_string(k.in.tdata_bits()) + "\n"));
  EXPECT_THAT(h, HasSubstr("#define MIXTD_OUT_WORDS_PER_FRAME " + std::to_string(k.out_words_per_frame) + "\n"));
  EXPECT_THAT(h, HasSubstr("#define MIXTD_REG_ARG_FRAMES 0x10\n"));
  EXPECT_THAT(h, HasSubstr("#define MIXTD_KERNEL_NAME \"mixtd_kernel\"\n"));
  EXPECT_THAT(h, HasSubstr("#define MIXTD_REG_WEIGHT_STATUS 0x18\n"));
  EXPECT_THAT(h, HasSubstr("#define MIXTD_WEIGHT_SEGMENTS " + std::to_string(k.weight_segments) + "\n"));
  // data/weights.bin is the stream the kernel takes, whole segments.
  const std::string& w = files.at("data/weights.bin");
  EXPECT_THAT(h, HasSubstr("#define MIXTD_WEIGHT_BYTES " + std::to_string(w.size()) + "\n"));
  EXPECT_EQ(rtl::weight_segments(std::vector<std::uint8_t>(w.begin(), w.end())).size(),
            static_cast<std::size_t>(k.weight_segments));
}

// The shipped sources compile as the package's Makefile compiles them:
// the movers against the C-simulation shim (no Xilinx headers here), the
// host against XRT's headers when Debian's libxrt-dev is installed.
TEST(Package, MoversAndHostCompileInThePackage) {
  const fs::path dir = scratch("compile");
  hls::PackageOptions o;
  o.frames = 3;
  hls::write_package(tiny(), o, dir);
  const std::string shim = std::string(MIXTD_SOURCE_DIR) + "/hls/shim";
  for (const char* m : {"hls/mixtd_mm2s.cpp", "hls/mixtd_s2mm.cpp", "hls/mixtd_mm2s_weights.cpp"})
    EXPECT_EQ(sh("cd " + dir.string() + " && c++ -std=c++17 -fsyntax-only -I " + shim + " -I include -I hls " + m), 0)
        << m;
  // Debian's libxrt-dev puts XRT's include/ at /usr/include/xrt (the package's
  // Makefile uses $(XILINX_XRT)/include of Xilinx's install).
  if (!fs::exists("/usr/include/xrt/xrt/xrt_kernel.h")) GTEST_SKIP() << "libxrt-dev not installed";
  EXPECT_EQ(sh("cd " + dir.string() + " && c++ -std=c++17 -fsyntax-only -I include -I /usr/include/xrt host/host.cpp"),
            0);
  EXPECT_EQ(fs::file_size(dir / "data/frames.bin"), 3u * 768u);
  EXPECT_EQ(fs::file_size(dir / "data/expected.bin"), 3u * 10u);
}

TEST(Package, BadOptionsAreRefusedBeforeWriting) {
  const arch::Design d = tiny();
  const fs::path dir = scratch("bad");
  auto error_of = [&](const hls::PackageOptions& o) {
    try {
      hls::write_package(d, o, dir);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  hls::PackageOptions o;
  o.platform = "xilinx_u280_gen3x16_xdma_1_202211_1";
  EXPECT_THAT(error_of(o), HasSubstr("--platform 'xilinx_u280_gen3x16_xdma_1_202211_1': legal "
                                     "xilinx_u250_gen3x16_xdma_4_1_202210_1"));
  o = {};
  o.kernel_mhz = 450;
  EXPECT_THAT(error_of(o), HasSubstr("--kernel-mhz 450: platform xilinx_u250_gen3x16_xdma_4_1_202210_1 runs kernels "
                                     "at 10..300 MHz"));
  EXPECT_FALSE(fs::exists(dir));
  // A regular file where the folder should go is named, and kept.
  write_file_atomic(dir, "mine");
  EXPECT_THAT(error_of({}), HasSubstr("exists and is not a folder"));
  EXPECT_EQ(read_file(dir), "mine");
}

TEST(Package, ADesignTheRtlGeneratorRefusesWritesNothing) {
  arch::Design d = tiny();
  for (auto& [name, m] : d.layers)
    if (!m.stages.empty()) {
      m.stages.front().p_in = 1000003;  // a prime: divides no channel count
      break;
    }
  const fs::path dir = scratch("refused");
  try {
    hls::write_package(d, {}, dir);
    ADD_FAILURE() << "an illegal p_in was packaged";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("p_in"));
  }
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Package, ReplacesAnOldPackageWhole) {
  const fs::path dir = scratch("replace");
  fs::create_directories(dir);
  write_file_atomic(dir / "stale.txt", "old");
  hls::PackageOptions o;
  o.frames = 2;
  hls::write_package(tiny(), o, dir);
  EXPECT_FALSE(fs::exists(dir / "stale.txt"));
  EXPECT_TRUE(fs::exists(dir / "Makefile"));
  EXPECT_EQ(fs::file_size(dir / "data/frames.bin"), 2u * 768u);
  for (const auto& e : fs::directory_iterator(dir.parent_path()))
    EXPECT_EQ(e.path().filename().string().find(".replace."), std::string::npos) << e.path();
}

}  // namespace

namespace {

// ResNet-18 on the U250 with configs/designs/resnet18-u250-svd.yaml: larger
// than one SLR's share. At the flow's budget (0.9: 11,058 DSPs of the four
// SLRs' 11,508) no cut along the pipeline fits; at 0.75 one does.
arch::Design resnet18_u250_svd(double budget = 0.75) {
  arch::Design d = arch::load_design(std::string(MIXTD_SOURCE_DIR) + "/configs/designs/resnet18-u250-svd.yaml");
  d.device_spec = "u250";
  d.device = arch::load_device("u250");
  d.clock_mhz = d.device.clock_mhz;
  search::SolverOptions o;
  o.budget = budget;
  d = search::solve(d, o).design;
  arch::size_fifos(d);
  return d;
}

TEST(Floorplan, Resnet18U250FitsTheSlrsAlongItsPipeline) {
  const arch::Design d = resnet18_u250_svd();
  const hls::Floorplan f = hls::plan_slrs(d);
  const arch::Resources share = hls::u250_slr_share();
  ASSERT_GT(f.slrs_used(), 1);
  ASSERT_LE(f.slrs_used(), hls::kU250Slrs);
  for (int k = 0; k < f.slrs_used(); ++k) {
    const arch::Resources& u = f.used[static_cast<std::size_t>(k)];
    EXPECT_LE(u.dsp, share.dsp) << "SLR" << k;
    EXPECT_LE(u.bram18, share.bram18) << "SLR" << k;
    EXPECT_LE(u.uram, share.uram) << "SLR" << k;
    EXPECT_LE(u.lut, share.lut) << "SLR" << k;
    EXPECT_LE(u.ff, share.ff) << "SLR" << k;
  }
  // Contiguous along the pipeline, every block placed, the totals the model's.
  arch::Resources sum;
  for (std::size_t i = 0; i < f.blocks.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(f.blocks[i].slr, f.blocks[i - 1].slr) << f.blocks[i].name;
    }
    sum += f.blocks[i].resources;
  }
  EXPECT_NEAR(sum.dsp, arch::analyse(d).total.dsp, 1e-6);
  EXPECT_FALSE(f.crossing_streams.empty());
  // The package carries the floorplan, and the link leaves the kernel to it.
  const auto files = package_files(d);
  ASSERT_TRUE(files.count("floorplan.tcl"));
  EXPECT_THAT(files.at("link.cfg"), testing::Not(HasSubstr("slr=kernel")));
  EXPECT_THAT(files.at("Makefile"), HasSubstr("floorplan.tcl"));
  const fs::path dir = scratch("floorplan");
  fs::create_directories(dir);
  std::ofstream(dir / "floorplan.tcl") << files.at("floorplan.tcl");
  EXPECT_EQ(sh("echo 'if {![info complete [read [open " + (dir / "floorplan.tcl").string() + "]]]} {exit 1}' | tclsh"),
            0);
  for (const auto& b : f.blocks)
    for (const auto& i : b.instances) EXPECT_THAT(files.at("floorplan.tcl"), HasSubstr("/" + i + "}]")) << i;
}

TEST(Floorplan, SmallDesignStaysInOneSlrAndTooLargeIsNamed) {
  const arch::Design t = tiny();
  EXPECT_EQ(hls::plan_slrs(t).slrs_used(), 1);
  EXPECT_EQ(package_files(t).count("floorplan.tcl"), 0u);
  EXPECT_THAT(package_files(t).at("link.cfg"), HasSubstr("slr=kernel:SLR0"));
  try {
    hls::plan_slrs(resnet18_u250_svd(0.9));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not fit 4 SLRs along its pipeline: the best cut puts SLR"));
    EXPECT_THAT(e.what(), HasSubstr("(solve it with a smaller --budget)"));
  }
}

}  // namespace
