// Vitis top function of the U250 package's weight mover (issue 22): the
// weight stream (data/weights.bin, rtl/WeightStream.h in mixtd) from DDR to
// the kernel's s_axis_weights, 64-bit beats, once after reset. The same
// mm2s as the frames' mover, at the weight stream's width; the whole file
// is one "frame" (frame_bytes = 0: TLAST on its last beat).
#include "mixtd_movers.h"

extern "C" void mixtd_mm2s_weights(const ap_uint<512>* mem, hls::stream<ap_axiu<64, 0, 0, 0>>& out,
                                   unsigned int bytes) {
#pragma HLS INTERFACE m_axi port = mem offset = slave bundle = gmem max_read_burst_length = 64
#pragma HLS INTERFACE axis port = out
#pragma HLS INTERFACE s_axilite port = mem
#pragma HLS INTERFACE s_axilite port = bytes
#pragma HLS INTERFACE s_axilite port = return
  mixtd::movers::mm2s<64>(mem, out, bytes, 0);
}
