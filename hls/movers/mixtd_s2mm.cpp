// Vitis top function of the U250 package's kernel -> DDR mover (issue 22):
// mixtd_movers.h's s2mm at the width of the kernel's m_axis, which the package
// generator writes into kernel_config.h as MIXTD_OUT_TDATA_BITS.
#include "kernel_config.h"
#include "mixtd_movers.h"

#ifndef MIXTD_OUT_TDATA_BITS
#error "kernel_config.h must define MIXTD_OUT_TDATA_BITS, the kernel's m_axis TDATA width in bits"
#endif

extern "C" void mixtd_s2mm(ap_uint<512>* mem, hls::stream<ap_axiu<MIXTD_OUT_TDATA_BITS, 0, 0, 0>>& in,
                           unsigned int bytes) {
  // Bursts of 64 words (4 KiB, AXI's limit) rather than the default 16. The
  // port also reads, once: the last word (mixtd_movers.h, s2mm's last word).
#pragma HLS INTERFACE m_axi port = mem offset = slave bundle = gmem max_write_burst_length = 64
#pragma HLS INTERFACE axis port = in
#pragma HLS INTERFACE s_axilite port = mem
#pragma HLS INTERFACE s_axilite port = bytes
#pragma HLS INTERFACE s_axilite port = return
  mixtd::movers::s2mm<MIXTD_OUT_TDATA_BITS>(mem, in, bytes);
}
