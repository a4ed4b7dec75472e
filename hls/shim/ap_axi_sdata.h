// C-SIMULATION SHIM for Xilinx's <ap_axi_sdata.h>: the AXI4-Stream beat
// ap_axiu<WData, WUser, WId, WDest> as Vitis HLS 2022 defines it (an alias of
// hls::axis<ap_uint<WData>, ...>). For C simulation only: a Vitis build compiles
// against Vitis HLS's own header, so hls/shim must never be on its include path.
//
// As in Vitis 2022, every side channel is a member: TKEEP and TSTRB one bit a
// byte lane, and TUSER, TID, TDEST one bit wide when their width is 0 (the
// interface then has no such port; the member is ignored). Vitis 2023 makes
// those members empty structs instead, so code that must build with both
// leaves them alone.
#ifndef MIXTD_HLS_SHIM_AP_AXI_SDATA_H
#define MIXTD_HLS_SHIM_AP_AXI_SDATA_H

#include <cstddef>

#include "ap_int.h"

namespace hls {

template <typename T>
struct axis_bytes;
template <int W>
struct axis_bytes<ap_uint<W>> {
  static constexpr int value = (W + 7) / 8;
};

template <typename T, std::size_t WUser, std::size_t WId, std::size_t WDest>
struct axis {
  static constexpr std::size_t NewWUser = WUser == 0 ? 1 : WUser;
  static constexpr std::size_t NewWId = WId == 0 ? 1 : WId;
  static constexpr std::size_t NewWDest = WDest == 0 ? 1 : WDest;
  T data;
  ap_uint<axis_bytes<T>::value> keep;
  ap_uint<axis_bytes<T>::value> strb;
  ap_uint<NewWUser> user;
  ap_uint<1> last;
  ap_uint<NewWId> id;
  ap_uint<NewWDest> dest;
};

}  // namespace hls

template <std::size_t WData, std::size_t WUser, std::size_t WId, std::size_t WDest>
using ap_axiu = hls::axis<ap_uint<WData>, WUser, WId, WDest>;

#endif  // MIXTD_HLS_SHIM_AP_AXI_SDATA_H
