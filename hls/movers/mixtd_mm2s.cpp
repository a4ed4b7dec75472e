// Vitis top function of the U250 package's DDR -> kernel mover (issue 22):
// mixtd_movers.h's mm2s at the width of the kernel's s_axis, which the package
// generator writes into kernel_config.h as MIXTD_IN_TDATA_BITS.
#include "kernel_config.h"
#include "mixtd_movers.h"

#ifndef MIXTD_IN_TDATA_BITS
#error "kernel_config.h must define MIXTD_IN_TDATA_BITS, the kernel's s_axis TDATA width in bits"
#endif

extern "C" void mixtd_mm2s(const ap_uint<512>* mem, hls::stream<ap_axiu<MIXTD_IN_TDATA_BITS, 0, 0, 0>>& out,
                           unsigned int bytes, unsigned int frame_bytes) {
  // Bursts of 64 words (4 KiB, AXI's limit) rather than the default 16.
#pragma HLS INTERFACE m_axi port = mem offset = slave bundle = gmem max_read_burst_length = 64
#pragma HLS INTERFACE axis port = out
#pragma HLS INTERFACE s_axilite port = mem
#pragma HLS INTERFACE s_axilite port = bytes
#pragma HLS INTERFACE s_axilite port = frame_bytes
#pragma HLS INTERFACE s_axilite port = return
  mixtd::movers::mm2s<MIXTD_IN_TDATA_BITS>(mem, out, bytes, frame_bytes);
}
