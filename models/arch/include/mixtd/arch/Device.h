// FPGA devices (configs/devices/*.yaml) and resource vectors.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mixtd::arch {

struct Resources {
  double dsp = 0, bram18 = 0, uram = 0, lut = 0, ff = 0;

  Resources& operator+=(const Resources& o) {
    dsp += o.dsp;
    bram18 += o.bram18;
    uram += o.uram;
    lut += o.lut;
    ff += o.ff;
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  Resources scaled(double f) const { return {dsp * f, bram18 * f, uram * f, lut * f, ff * f}; }
  // Every component within `budget`.
  bool fits(const Resources& budget) const {
    return dsp <= budget.dsp && bram18 <= budget.bram18 && uram <= budget.uram && lut <= budget.lut && ff <= budget.ff;
  }
  // The largest used/available ratio over the components (0 for a zero budget
  // component that is unused, infinity if used).
  double max_utilisation(const Resources& budget) const;
  // The name of the component with the largest ratio ("DSP", "BRAM18", ...).
  std::string binding(const Resources& budget) const;
};

struct Device {
  std::string name;
  std::string part;
  std::string family;  // yosys synth_xilinx -family
  Resources capacity;
  double clock_mhz = 200.0;
  double host_words_per_cycle = 64.0;
};

// The clocks a device or design may give, in MHz: outside this, FPS figures
// are meaningless (a typo, or 1e308 giving "inf FPS").
inline constexpr double kMinClockMhz = 1.0;
inline constexpr double kMaxClockMhz = 1000.0;
std::string clock_range();  // "1 .. 1000 MHz", for messages

// Bits of block memory (BRAM18 of 18 Kib, URAM288 of 288 Kib): the bound on
// any one FIFO of a design on this device.
double memory_bits(const Device& d);

// `spec` is a device name (looked up as <configs>/devices/<name>.yaml, where
// <configs> is $MIXTD_CONFIGS or the source tree's configs/) or a path to a
// .yaml. Throws mixtd::Error naming the file and the missing/bad field.
Device load_device(const std::string& spec);
Device parse_device(const std::string& yaml_text, const std::string& source);

// The names of the devices in <configs>/devices.
std::vector<std::string> device_names();

std::filesystem::path configs_dir();

}  // namespace mixtd::arch
