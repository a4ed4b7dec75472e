// The one description of the U250 kernel's interface (issue 22): its name,
// the register map, the streams' widths and beats per frame. The SV wrapper,
// kernel.xml, the Tcl, the link config, the host's kernel_config.h and the
// protocol test bench are all generated from a KernelInterface, so they
// cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/rtl/Generator.h"

namespace mixtd::hls {

// ap_ctrl_hs (UG1393) as Vitis HLS lays it out for one scalar argument.
inline constexpr std::uint32_t kRegCtrl = 0x00, kRegGie = 0x04, kRegIer = 0x08, kRegIsr = 0x0C, kRegArgFrames = 0x10;
// Read-only, after the argument (Vitis leaves 0x14 for a 64-bit one's high
// half): the weight loader's counts, bits [15:0] segments taken, [31:16]
// headers refused (rtl/lib/mixtd_weight_loader.sv).
inline constexpr std::uint32_t kRegWeightStatus = 0x18;
inline constexpr std::uint32_t kCtrlStart = 1u << 0, kCtrlDone = 1u << 1, kCtrlIdle = 1u << 2, kCtrlReady = 1u << 3,
                               kCtrlAutoRestart = 1u << 7;
inline constexpr int kControlAddrBits = 12;  // a 4 KB window, as Vitis RTL kernels have

struct AxisPort {
  std::string name;                  // "s_axis", "m_axis"
  std::int64_t words_per_beat = 1;   // int8 words, lane 0 in TDATA[7:0]
  std::int64_t beats_per_frame = 0;  // a frame is a whole number of beats
  std::int64_t tdata_bits() const { return 8 * words_per_beat; }
};

struct Register {
  std::string name;
  std::uint32_t offset = 0;
  std::string access;  // IP-XACT: read-write, read-only
  std::string description;
};

struct KernelInterface {
  std::string kernel = "mixtd_kernel";  // the RTL kernel (and its SV module)
  std::string mm2s = "mixtd_mm2s", s2mm = "mixtd_s2mm";
  std::string mm2s_weights = "mixtd_mm2s_weights";  // the weight stream's mover (64-bit beats)
  std::string core;                                 // the generated top it wraps (rtl::GeneratedRtl::top)
  std::string argument = "frames";                  // the one scalar argument
  AxisPort in{"s_axis"}, out{"m_axis"};
  // The weight stream (rtl/WeightStream.h): 8 bytes a beat, the whole
  // stream one "frame" of weight_beats beats and weight_segments segments.
  AxisPort weights{"s_axis_weights", 8};
  std::int64_t weight_beats = 0, weight_segments = 0;
  std::int64_t in_words_per_frame = 0, out_words_per_frame = 0;

  std::vector<Register> registers() const;
};

// The interface of `g` (its widths and frame sizes); g must be generated
// with rtl::WeightLoad::Stream.
KernelInterface kernel_interface(const rtl::GeneratedRtl& g);

// The SV of the kernel top: mixtd_kernel_ctrl (hls/rtl) and a run counter
// around g.top, with AXI4-Stream ports and TLAST at every frame's end.
std::string kernel_top_sv(const KernelInterface& k);

// The static SV the kernel top needs (hls/rtl/*.sv, embedded at build time).
const std::vector<rtl::GeneratedFile>& kernel_library();

// The kernel's RTL: g's files, the kernel top (<kernel>.sv) and
// kernel_library() under lib/, with files.f listing them all.
std::vector<rtl::GeneratedFile> kernel_files(const rtl::GeneratedRtl& g, const KernelInterface& k);

}  // namespace mixtd::hls
