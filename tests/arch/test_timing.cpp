// Hand-computed cycles and resources of single stages (Timing.h, Resources.h).
#include <gtest/gtest.h>

#include "mixtd/arch/Resources.h"
#include "mixtd/arch/Timing.h"
#include "mixtd/support/Error.h"

using namespace mixtd::arch;

namespace {

mixtd::td::StageShape conv3x3(std::int64_t c, std::int64_t n, std::int64_t h, std::int64_t w) {
  mixtd::td::StageShape s;
  s.role = "conv";
  s.in_ch = c;
  s.out_ch = n;
  s.kh = s.kw = 3;
  s.ph = s.pw = 1;
  s.in = {c, h, w};
  s.out = {n, h, w};
  return s;
}

TEST(Timing, DenseStageHandComputed) {
  const auto s = conv3x3(16, 32, 8, 8);
  const Cycles c = stage_cycles(s, Psi{4, 8, 3});
  EXPECT_EQ(c.in, 8 * 8 * 16 / 4);                     // 256
  EXPECT_EQ(c.compute, 64 * (16 / 4) * (32 / 8) * 3);  // 3072
  EXPECT_EQ(c.out, 64 * 32 / 8);                       // 256
  EXPECT_EQ(c.interval(), 3072);
  // Window: (kh-1-ph) rows + (kw-pw) pixels of 16 channels = 160 words / p_in,
  // then C/p_in * kk/fine cycles for the first outputs, then the pipelines.
  EXPECT_EQ(c.fill, 160 / 4 + 4 * 3 + kMacPipeline + kRequantPipeline);
  EXPECT_EQ(stage_multipliers(s, Psi{4, 8, 3}), 96);
}

TEST(Timing, DepthwiseStageScattersChannels) {
  mixtd::td::StageShape s;
  s.role = "cpd.2";
  s.in_ch = s.out_ch = s.groups = 12;
  s.depthwise = true;
  s.kh = 3;
  s.kw = 1;
  s.sh = 2;
  s.ph = 1;
  s.in = {12, 10, 6};
  s.out = {12, 5, 6};
  const Cycles c = stage_cycles(s, Psi{4, 4, 3});
  EXPECT_EQ(c.compute, 30 * (12 / 4) * 1);
  EXPECT_EQ(c.in, 10 * 6 * 12 / 4);
  EXPECT_EQ(c.out, 30 * 12 / 4);
  EXPECT_EQ(stage_multipliers(s, Psi{4, 4, 3}), 12);
}

TEST(Timing, OneByOneNeedsOnePixel) {
  mixtd::td::StageShape s;
  s.in_ch = 8;
  s.out_ch = 4;
  s.in = {8, 5, 5};
  s.out = {4, 5, 5};
  EXPECT_EQ(window_fill_words(s), 8);
  EXPECT_EQ(stage_cycles(s, Psi{2, 2, 1}).compute, 25 * 4 * 2);
}

TEST(Resources, MemoryTables) {
  EXPECT_EQ(bram18_for(512, 36), 1);
  EXPECT_EQ(bram18_for(513, 36), 2);
  EXPECT_EQ(bram18_for(2048, 8), 1);   // 2K x 9
  EXPECT_EQ(bram18_for(48, 768), 22);  // 512 x 36, 22 wide
  EXPECT_EQ(bram18_for(16384, 1), 1);
  EXPECT_EQ(uram_for(4096, 72), 1);
  EXPECT_EQ(uram_for(4096, 144), 2);
  EXPECT_EQ(uram_for(36864, 8), 1);  // 9 bytes packed per 72-bit row
}

// rtl/lib's MAC arrays: a dense stage packs units 2k and 2k+1 (same window
// word) into one DSP48E2, an odd p_out's last unit alone; depthwise products
// share no operand, one DSP each; wider than 8 bits, one DSP per multiply.
TEST(Resources, DspsFollowTheMacArrays) {
  const auto s = conv3x3(16, 32, 8, 8);
  EXPECT_EQ(dsps_for(s, Psi{4, 8, 3}, {8, 8}), 48);                      // 96 multiplies, 4 pairs
  EXPECT_EQ(dsps_for(s, Psi{4, 1, 3}, {8, 8}), 12);                      // one unit: no partner
  EXPECT_EQ(dsps_for(s, Psi{4, 3, 3}, {8, 8}), 24);                      // a pair and one alone
  EXPECT_EQ(dsps_for(conv3x3(16, 40, 8, 8), Psi{2, 5, 9}, {8, 8}), 54);  // 90 multiplies, ⌈5/2⌉ = 3
  EXPECT_EQ(dsps_for(s, Psi{4, 8, 3}, {16, 8}), 96);
  EXPECT_EQ(dsps_for(s, Psi{4, 8, 3}, {8, 16}), 96);
  mixtd::td::StageShape dw = s;
  dw.depthwise = true;
  dw.out_ch = dw.groups = dw.in_ch;
  EXPECT_EQ(dsps_for(dw, Psi{4, 4, 3}, {8, 8}), 12);  // p_in·fine, never packed
  EXPECT_EQ(dsps_for(dw, Psi{4, 4, 3}, {16, 16}), 12);
  // stage_resources counts exactly these.
  EXPECT_EQ(stage_resources(s, Psi{4, 3, 3}, {8, 8}, false).total.dsp, 24.0);
  EXPECT_EQ(stage_resources(dw, Psi{4, 4, 3}, {8, 8}, false).total.dsp, 12.0);
}

// Where yosys synth_xilinx put rtl/lib's stream FIFO (depth x width bits),
// docs/rtl-resources.md: the model must place each the same way.
TEST(Resources, RamPlacementFollowsYosys) {
  const auto expect = [](std::int64_t depth, std::int64_t width, MemoryKind kind, double lut, double ff,
                         double bram18) {
    const Memory m = place_memory(depth, width);
    EXPECT_EQ(m.kind, kind) << depth << " x " << width;
    EXPECT_EQ(m.cost.lut, lut) << depth << " x " << width;
    EXPECT_EQ(m.cost.ff, ff) << depth << " x " << width;
    EXPECT_EQ(m.cost.bram18, bram18) << depth << " x " << width;
    EXPECT_EQ(is_block_memory(depth, width), kind == MemoryKind::Bram) << depth << " x " << width;
  };
  expect(2, 8, MemoryKind::Registers, 0, 16, 0);   // 16 bits: a tie with one RAM32M16, registers
  expect(2, 32, MemoryKind::Lutram, 24, 0, 0);     // 3 RAM32M16
  expect(128, 8, MemoryKind::Lutram, 32, 0, 0);    // 4 RAM64M8
  expect(128, 16, MemoryKind::Lutram, 48, 0, 0);   // 6
  expect(256, 8, MemoryKind::Lutram, 64, 0, 0);    // 8
  expect(64, 64, MemoryKind::Lutram, 80, 0, 0);    // 10
  expect(64, 512, MemoryKind::Lutram, 592, 0, 0);  // 74: still cheaper than 15 BRAM18
  expect(128, 36, MemoryKind::Bram, 0, 0, 1);      // 12 RAM64M8 cost more than a BRAM18
  expect(128, 72, MemoryKind::Bram, 0, 0, 2);      // a RAMB36
  EXPECT_EQ(lutram_cells(32, 14), 1);
  EXPECT_EQ(lutram_cells(33, 14), 2);
  EXPECT_EQ(rom_luts(144, 8), 24);
}

TEST(Resources, StageHandComputed) {
  const auto s = conv3x3(16, 32, 8, 8);
  const StageResources r = stage_resources(s, Psi{4, 8, 3}, {8, 8}, true);
  EXPECT_EQ(r.total.dsp, 48);
  // Weights 32*16*9 = 4608 over 96 banks: 48 deep x 768 bits, 22 BRAM18
  // (cost 22 x 129) or a ROM in logic (cost 48 x 768 / 64 = 576): logic,
  // a LUT6 per bit, 768 LUTs.
  EXPECT_EQ(r.weights.kind, MemoryKind::Rom);
  EXPECT_EQ(r.weights.depth, 48);
  EXPECT_EQ(r.weights.cost.lut, 768);
  EXPECT_EQ(r.weights.cost.bram18, 0);
  EXPECT_FALSE(weight_memory_is_a_choice(s, Psi{4, 8, 3}, {8, 8}, true));
  // Line buffer: a ring of 3 lines of 8 pixels = 24 slots of 16/4 beats: 96
  // deep x 32 bits. 10 RAM64M8 (cost 160) or one BRAM18 (129): BRAM18, one
  // copy per read port (fine = 3).
  EXPECT_EQ(line_buffer_capacity(3, 3, 1, 1, 1, 1, 8, 8), 24);
  EXPECT_EQ(r.line_buffer.kind, MemoryKind::Bram);
  EXPECT_EQ(r.line_buffer.cost.bram18, 3);
  EXPECT_EQ(r.total.bram18, 3);
}

TEST(Resources, DeepNarrowWeightsGoToUram) {
  // ResNet-18 layer4 conv at psi = 1: 2.36M weights x 8 bits.
  auto s = conv3x3(512, 512, 7, 7);
  const StageResources r = stage_resources(s, Psi{1, 1, 1}, {8, 8}, true);
  EXPECT_EQ(r.weights.kind, MemoryKind::Uram);
  EXPECT_EQ(r.weights.cost.uram, 64);  // 2359296 / 9 / 4096
  const StageResources b = stage_resources(s, Psi{1, 1, 1}, {8, 8}, false);
  EXPECT_EQ(b.weights.kind, MemoryKind::Bram);
  EXPECT_EQ(b.weights.cost.bram18, 1152);  // 2K x 9
}

// A wide weight memory: BRAM18 and URAM allocate the same bits, so Auto's
// tie rule says BRAM18 and only the explicit choice puts it in URAM.
TEST(Resources, WideWeightsGoWhereTheDesignSays) {
  // ResNet-18 layer4 conv, psi = (1, 8, 9): 72 multipliers, 2359296 / 72 =
  // 32768 deep x 576 bits.
  const auto s = conv3x3(512, 512, 7, 7);
  Psi psi{1, 8, 9};
  const MemoryShape shape = weight_memory_shape(s, psi, {8, 8});
  EXPECT_EQ(shape.depth, 32768);
  EXPECT_EQ(shape.width_bits, 576);
  // BRAM18 512 x 36: 64 deep x 16 wide = 1024; URAM 4K x 72: 8 x 8 = 64
  // (= 1024 BRAM18 of bits): a tie.
  EXPECT_EQ(bram18_for(32768, 576), 1024);
  EXPECT_EQ(uram_for(32768, 576), 64);
  EXPECT_TRUE(weight_memory_is_a_choice(s, psi, {8, 8}, true));
  EXPECT_EQ(auto_weight_memory(s, psi, {8, 8}, true), WeightMemory::Bram);

  const StageResources as_auto = stage_resources(s, psi, {8, 8}, true);
  EXPECT_EQ(as_auto.weights.kind, MemoryKind::Bram);
  EXPECT_EQ(as_auto.weights.cost.bram18, 1024);
  EXPECT_EQ(as_auto.weights.cost.uram, 0);

  psi.weight_memory = WeightMemory::Uram;
  const StageResources in_uram = stage_resources(s, psi, {8, 8}, true);
  EXPECT_EQ(in_uram.weights.kind, MemoryKind::Uram);
  EXPECT_EQ(in_uram.weights.cost.uram, 64);
  EXPECT_EQ(in_uram.weights.cost.bram18, 0);
  // Only the weights moved: 36 DSP, and the line buffer's BRAM18 stay (a
  // ring of 21 pixels x 512 words x 8 bits: 6 BRAM18 as 2K x 9, once per
  // read port: 9 of them).
  EXPECT_EQ(in_uram.total.dsp, 36);
  EXPECT_EQ(line_buffer_capacity(3, 3, 1, 1, 1, 1, 7, 7), 21);
  EXPECT_EQ(in_uram.line_buffer.cost.bram18, 54);
  EXPECT_EQ(in_uram.total.bram18, 54);
  EXPECT_EQ(in_uram.total.uram, 64);
  EXPECT_EQ(as_auto.total.bram18, 1078);
  EXPECT_EQ(in_uram.total.lut, as_auto.total.lut);
  // The search's shortcut agrees with the rule.
  const StageResources swapped = with_weight_memory(as_auto, WeightMemory::Uram, true);
  EXPECT_EQ(swapped.total.bram18, in_uram.total.bram18);
  EXPECT_EQ(swapped.total.uram, in_uram.total.uram);
  EXPECT_EQ(swapped.total.lut, in_uram.total.lut);

  psi.weight_memory = WeightMemory::Bram;
  EXPECT_EQ(stage_resources(s, psi, {8, 8}, true).total.bram18, 1078);
}

TEST(Resources, ExplicitBramOverridesAutosUram) {
  // Deep and narrow: Auto picks URAM (64 vs 1152 BRAM18); bram keeps it in BRAM18.
  const auto s = conv3x3(512, 512, 7, 7);
  Psi psi{1, 1, 1, WeightMemory::Bram};
  EXPECT_EQ(auto_weight_memory(s, psi, {8, 8}, true), WeightMemory::Uram);
  const StageResources r = stage_resources(s, psi, {8, 8}, true);
  EXPECT_EQ(r.weights.kind, MemoryKind::Bram);
  EXPECT_EQ(r.weights.cost.bram18, 1152);
  EXPECT_EQ(r.weights.cost.uram, 0);
}

TEST(Resources, SmallWeightsAndNoUramLeaveNoChoice) {
  // 4 x 4 x 9 = 144 weights x 8 bits = 1152 bits: a ROM in logic (3 LUT6
  // per bit) whatever the design says.
  const auto s = conv3x3(4, 4, 8, 8);
  for (WeightMemory m : {WeightMemory::Auto, WeightMemory::Bram, WeightMemory::Uram}) {
    const Psi psi{1, 1, 1, m};
    EXPECT_FALSE(weight_memory_is_a_choice(s, psi, {8, 8}, true));
    const StageResources r = stage_resources(s, psi, {8, 8}, true);
    EXPECT_EQ(r.weights.kind, MemoryKind::Rom) << to_string(m);
    EXPECT_EQ(r.weights.cost.lut, 24) << to_string(m);
  }
  EXPECT_EQ(auto_weight_memory(s, Psi{}, {8, 8}, true), WeightMemory::Auto);
  // Without URAM on the device nothing is a choice, and uram is refused.
  const auto big = conv3x3(512, 512, 7, 7);
  EXPECT_FALSE(weight_memory_is_a_choice(big, Psi{}, {8, 8}, false));
  EXPECT_THROW(stage_resources(big, Psi{1, 1, 1, WeightMemory::Uram}, {8, 8}, false), mixtd::Error);
}

}  // namespace
