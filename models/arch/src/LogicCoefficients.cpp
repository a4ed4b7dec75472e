// The LUT/FF coefficients of every block kind (Resources.h LogicBlock), per
// feature (logic_feature_names). These are still the first estimates
// (fpgaConvNet-like magnitudes). docs/rtl-resources.md compares them with
// yosys synthesis of rtl/lib (34–115% mean LUT error per block) and says
// why the refit it prints is not committed yet:
//
//   scripts/yosys-sweep            # writes docs/rtl-resources.csv
//   mixtd resources fit docs/rtl-resources.csv
#include "mixtd/arch/Resources.h"

namespace mixtd::arch {

namespace {

// clang-format off
const LogicCoefficients kCoefficients[kLogicBlocks] = {
    /* stage           */ {{180, 12, 45, 8}, {250, 16, 70, 8}},
    /* depthwise_stage */ {{180, 12, 45, 8}, {250, 16, 70, 8}},
    /* pool            */ {{60, 10, 0, 0}, {60, 12, 0, 0}},
    /* fifo            */ {{20, 0, 0, 0}, {30, 0, 0, 0}},
    /* split           */ {{30, 16, 0, 0}, {30, 8, 0, 0}},
    /* merge           */ {{30, 16, 0, 0}, {30, 8, 0, 0}},
    /* regroup         */ {{30, 16, 0, 0}, {30, 8, 0, 0}},
    /* fork            */ {{30, 16, 0, 0}, {30, 8, 0, 0}},
    /* relu            */ {{30, 16, 0, 0}, {30, 8, 0, 0}},
    /* group_add       */ {{30, 56, 16, 0}, {30, 8, 8, 0}},
    /* eltwise_add     */ {{30, 16, 16, 0}, {30, 8, 8, 0}},
    /* global_avg_pool */ {{30, 32, 0, 0}, {30, 16, 32, 0}},
    /* host            */ {{30, 16, 0, 0}, {30, 8, 0, 0}},
};
// clang-format on

}  // namespace

const LogicCoefficients& logic_coefficients(LogicBlock b) { return kCoefficients[static_cast<int>(b)]; }

}  // namespace mixtd::arch
