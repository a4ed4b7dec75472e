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
    /* stage           */ {{702.04, 73.92, 0, 20.12}, {234.99, 1.26, 96.24, 6.04}},
    /* depthwise_stage */ {{465.82, 22.23, 414.58, 0}, {131.51, 5.26, 140.02, 0}},
    /* pool            */ {{413.91, 29.25, 0, 0}, {116.45, 0, 0, 0}},
    /* fifo            */ {{9.67, 12.06, 0, 0}, {13.29, 0, 0, 0}},
    /* split           */ {{29.86, 0.31, 9.58, 0.02}, {15.9, 0.15, 16.28, 0}},
    /* merge           */ {{43.93, 0, 8.1, 0}, {12.76, 0, 16.32, 0}},
    /* regroup         */ {{36.41, 6.33, 13.04, 0}, {10.06, 0.41, 17.16, 0}},
    /* fork            */ {{25.69, 0, 20.86, 0.31}, {15.21, 0, 16.77, 0}},
    /* relu            */ {{10.51, 2.43, 9.62, 0.08}, {9.58, 0, 16.1, 0}},
    /* group_add       */ {{211.39, 0, 37.17, 16.69}, {59.32, 0, 16.73, 17.12}},
    /* eltwise_add     */ {{178.07, 0, 45.98, 8.9}, {22.37, 0, 14.72, 16.11}},
    /* global_avg_pool */ {{20.4, 13.86, 41.08, 0}, {11.17, 0, 33.01, 0}},
    /* host            */ {{30, 16, 0, 0}, {30, 8, 0, 0}},  // not in rtl/lib: first estimate
};
// clang-format on

}  // namespace

const LogicCoefficients& logic_coefficients(LogicBlock b) { return kCoefficients[static_cast<int>(b)]; }

}  // namespace mixtd::arch
