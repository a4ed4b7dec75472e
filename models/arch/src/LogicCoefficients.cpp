// The LUT/FF coefficients of every block kind (Resources.h LogicBlock), per
// feature (logic_feature_names): the least-squares fit (relative error,
// no negative coefficient beyond the constant) to yosys synth_xilinx of
// rtl/lib over the sweep grid and the blocks of two whole designs
// (resnet18-fmnist:width=0.25 solved for the U250 and for the ZC706),
// pasted from
//
//   scripts/yosys-sweep --jobs 2        # writes docs/rtl-resources.csv
//   scripts/yosys-sweep --design D.yaml # D-rtl/yosys-blocks.csv, copied to
//                                       # docs/rtl-resources-resnet18-{u250,zc706}.csv
//   mixtd resources fit docs/rtl-resources.csv
//       docs/rtl-resources-resnet18-u250.csv docs/rtl-resources-resnet18-zc706.csv
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
    /* stage           */ {{762.85, 5.43, 129.21, 0}, {216.81, 0.02, 89.44, 0.21}},
    /* depthwise_stage */ {{463.09, 0.54, 481.29, 0}, {143.68, 0, 133.22, 0}},
    /* pool            */ {{419.86, 29.24, 0, 0}, {116.45, 0, 0, 0}},
    /* fifo            */ {{19.2, 11.54, 0, 0}, {13.95, 0, 0, 0}},
    /* split           */ {{5.55, 1.67, 8.42, 0}, {15.9, 0.15, 16.28, 0}},
    /* merge           */ {{12.3, 0.43, 8.16, 0}, {12.76, 0, 16.32, 0}},
    /* regroup         */ {{28.48, 10.4, 7.25, 0}, {10.06, 0.41, 17.16, 0}},
    /* fork            */ {{8.18, 0, 22.08, 0.32}, {15.21, 0, 16.77, 0}},
    /* relu            */ {{-23.21, 10.94, 9.59, 0.1}, {9.58, 0, 16.1, 0}},
    /* group_add       */ {{225.18, 0, 61.87, 15.22}, {39.4, 0, 34.45, 16.5}},
    /* eltwise_add     */ {{38.13, 0, 84.9, 8.94}, {17.8, 0, 17.5, 16.09}},
    /* global_avg_pool */ {{67.71, 10.96, 35.7, 0}, {51.93, 0, 27.65, 0}},
    /* repack          */ {{13.91, 24.82, 14.51, 0.77}, {7.7, 8.14, 0.03, 0}},
    /* host            */ {{30, 16, 0, 0}, {30, 8, 0, 0}},  // not in rtl/lib: first estimate
};
// clang-format on

}  // namespace

const LogicCoefficients& logic_coefficients(LogicBlock b) { return kCoefficients[static_cast<int>(b)]; }

}  // namespace mixtd::arch
