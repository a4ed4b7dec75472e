// The LUT/FF coefficients of every block kind (Resources.h LogicBlock), per
// feature (logic_feature_names): the least-squares fit (relative error,
// no negative coefficient beyond the constant) to yosys synth_xilinx of
// rtl/lib over the sweep grid, pasted from
//
//   scripts/yosys-sweep --jobs 2        # writes docs/rtl-resources.csv
//   mixtd resources fit docs/rtl-resources.csv
//
// under the memory rules of Resources.cpp. tests/rtl/test_rtl_resources
// checks that this table is that fit; docs/rtl-resources.md has the
// model-vs-yosys error per block before and after. The host port is not in
// rtl/lib: its row is the first estimate.
#include "mixtd/arch/Resources.h"

namespace mixtd::arch {

namespace {

// clang-format off
const LogicCoefficients kCoefficients[kLogicBlocks] = {
    /* stage           */ {{892.91, 19.5, 114.86, 0}, {199.68, 0.15, 116.92, 8.29}},
    /* depthwise_stage */ {{462.63, 0, 482.09, 0}, {135.88, 3.32, 150.83, 0}},
    /* pool            */ {{419.86, 29.24, 0, 0}, {116.45, 0, 0, 0}},
    /* fifo            */ {{9.67, 12.06, 0, 0}, {13.29, 0, 0, 0}},
    /* split           */ {{5.55, 1.67, 8.42, 0}, {15.9, 0.15, 16.28, 0}},
    /* merge           */ {{12.3, 0.43, 8.16, 0}, {12.76, 0, 16.32, 0}},
    /* regroup         */ {{28.48, 10.4, 7.25, 0}, {10.06, 0.41, 17.16, 0}},
    /* fork            */ {{8.18, 0, 22.08, 0.32}, {15.21, 0, 16.77, 0}},
    /* relu            */ {{-23.21, 10.94, 9.59, 0.1}, {9.58, 0, 16.1, 0}},
    /* group_add       */ {{225.18, 0, 61.87, 15.22}, {39.4, 0, 34.45, 16.5}},
    /* eltwise_add     */ {{182.64, 0, 49.66, 8.92}, {22.37, 0, 14.72, 16.11}},
    /* global_avg_pool */ {{20.4, 13.86, 41.08, 0}, {11.17, 0, 33.01, 0}},
    /* host            */ {{30, 16, 0, 0}, {30, 8, 0, 0}},  // not in rtl/lib: first estimate
};
// clang-format on

}  // namespace

const LogicCoefficients& logic_coefficients(LogicBlock b) { return kCoefficients[static_cast<int>(b)]; }

}  // namespace mixtd::arch
