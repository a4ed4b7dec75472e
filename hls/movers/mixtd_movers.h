// The U250 package's data movers (issue 22): Vitis HLS kernels that move bytes
// between DDR, read and written as 512-bit words, and the RTL kernel's
// AXI4-Stream ports, W bits a beat (8 <= W <= 1024, a multiple of 8, not
// necessarily dividing 512). mixtd_mm2s.cpp and mixtd_s2mm.cpp are the top
// functions; this header is all the logic, so the C simulation
// (tests/hls/test_movers.cpp) runs the same code. Plain C++14 on Xilinx's
// ap_int.h / hls_stream.h / ap_axi_sdata.h, nothing of mixtd's libraries.
//
// What a Vitis user must know:
// - Byte order: byte i of the buffer is byte lane i % (W/8) of beat i / (W/8),
//   lane k being TDATA bits [8k+7 : 8k]; in a 512-bit word, byte j is bits
//   [8j+7 : 8j]. Both are the little-endian order an x86 host writes.
// - Buffers: 64-byte aligned (XRT's buffer objects are) and `bytes` < 4 GiB.
// - mm2s: TKEEP = TSTRB = all lanes, except on a short last beat when `bytes`
//   is not a multiple of W/8 (then the low lanes, and the other lanes' TDATA
//   is 0). TLAST is on every (frame_bytes / (W/8))-th beat and on the last
//   beat. frame_bytes MUST be a multiple of W/8 (the kernel's frames are whole
//   beats); otherwise TLAST lands on the wrong beats. frame_bytes = 0 (or less
//   than a beat) makes the whole transfer one frame. A `bytes` that is not a
//   multiple of frame_bytes ends with a short frame, TLAST on its last beat.
// - s2mm: takes beats until `bytes` bytes are stored, packed densely. A beat's
//   valid bytes are its low lanes up to the first lane whose TKEEP is 0 (a
//   packed stream; later lanes are ignored), so a frame may end on a short
//   beat. TLAST, TSTRB and TUSER are ignored. The bytes of the beat that
//   completes `bytes` past that count are dropped, and beats after it stay in
//   the stream (the kernel would stall): set `bytes` to what the kernel
//   sends. A stream that ends early leaves s2mm waiting for ever (the C
//   simulation shim throws instead).
// - s2mm's last word: the bytes after `bytes` in it keep their value. s2mm
//   reads that word before it writes anything and writes it back merged, so
//   nothing else may write those bytes while s2mm runs. Whole 64-byte words
//   past the last one are never touched.
// - `bytes` = 0 moves nothing: no beat (so no TLAST), no memory access.
// - Throughput, if Vitis meets the loops' II=1 (not synthesised yet; C
//   simulation only): each iteration ends a beat, a 512-bit word or both, so
//   about (beats + words) cycles, fewer where the two end together: one beat
//   a cycle when W divides 512, 64 bytes a cycle when 512 divides W.
// - Every ap_uint is at most 1024 bits: the default AP_INT_MAX_W will do.
// - The beats are ap_axiu<W, 0, 0, 0>: no TUSER, TID or TDEST, which the code
//   never touches (Vitis 2022 has 1-bit members for them, 2023 empty structs).
// - hls/shim is for C simulation only; never put it on a Vitis include path.
#ifndef MIXTD_HLS_MOVERS_H
#define MIXTD_HLS_MOVERS_H

#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>

namespace mixtd {
namespace movers {
namespace detail {

inline unsigned words_of(unsigned bytes) { return bytes / 64 + (bytes % 64 != 0 ? 1 : 0); }

// The low n bytes of a word set, 1 <= n <= 64 (the shift stays below 512).
inline ap_uint<512> low_bytes(unsigned n) { return ~ap_uint<512>(0) >> (512 - 8 * n); }

// The memory side of each mover is a loop of its own, one word an iteration
// and nothing conditional, so that Vitis infers full-length bursts; the width
// conversion, whose reads or writes are conditional, is another process.
inline void read_words(const ap_uint<512>* mem, hls::stream<ap_uint<512>>& words, unsigned bytes) {
  const unsigned n = words_of(bytes);
  for (unsigned i = 0; i < n; ++i) {
#pragma HLS PIPELINE II = 1
    words.write(mem[i]);
  }
}

inline void write_words(ap_uint<512>* mem, hls::stream<ap_uint<512>>& words, unsigned bytes) {
  const unsigned n = words_of(bytes);
  for (unsigned i = 0; i < n; ++i) {
#pragma HLS PIPELINE II = 1
    mem[i] = words.read();
  }
}

// Each iteration moves the largest run of bytes that neither crosses a word
// nor a beat: one shift out of the word, one into the beat. Bytes not yet
// filled in `beat` are 0, so the run is ORed in; what the shift carries past
// the run lands beyond the beat's width, or is 0 (the word's bytes past the
// end are cleared when it is read).
template <int W>
void words_to_beats(hls::stream<ap_uint<512>>& words, hls::stream<ap_axiu<W, 0, 0, 0>>& out, unsigned bytes,
                    unsigned frame_bytes) {
  const unsigned kB = W / 8;
  const unsigned frame_beats = frame_bytes / kB;
  ap_uint<512> word = 0;
  ap_uint<W> beat = 0;
  unsigned pos = 64;  // bytes of `word` already moved; 64: read the next one
  unsigned fill = 0;  // bytes in `beat`
  unsigned done = 0;
  unsigned beat_in_frame = 0;
  while (done < bytes) {
#pragma HLS PIPELINE II = 1
    if (pos == 64) {
      word = words.read();
      if (bytes - done < 64) word &= low_bytes(bytes - done);
      pos = 0;
    }
    unsigned n = 64 - pos;
    if (kB - fill < n) n = kB - fill;
    if (bytes - done < n) n = bytes - done;
    beat |= ap_uint<W>(word >> (8 * pos)) << (8 * fill);
    pos += n;
    fill += n;
    done += n;
    if (fill == kB || done == bytes) {
      ap_axiu<W, 0, 0, 0> b;
      b.data = beat;
      b.keep = ~ap_uint<kB>(0) >> (kB - fill);
      b.strb = b.keep;
      // TUSER, TID, TDEST stay unset: at width 0 the interface has no such
      // port, and from Vitis 2023 on the members are empty structs.
      ++beat_in_frame;
      const bool frame_end = beat_in_frame == frame_beats;
      if (frame_end) beat_in_frame = 0;
      b.last = frame_end || done == bytes;
      out.write(b);
      beat = 0;
      fill = 0;
    }
  }
}

// The reverse of words_to_beats: runs that cross neither a beat nor a word,
// ORed into a word whose unfilled bytes are 0. A beat's lanes past its valid
// bytes are cleared when it is read, so that they cannot reach the word; the
// last word takes the bytes past `bytes` from `tail`.
template <int W>
void beats_to_words(hls::stream<ap_axiu<W, 0, 0, 0>>& in, hls::stream<ap_uint<512>>& words, unsigned bytes,
                    ap_uint<512> tail) {
  ap_uint<W> beat = 0;
  ap_uint<512> word = 0;
  unsigned have = 0;  // valid bytes in `beat`
  unsigned pos = 0;   // bytes of `beat` already moved; `have`: read the next one
  unsigned fill = 0;  // bytes in `word`
  unsigned done = 0;
  while (done < bytes) {
#pragma HLS PIPELINE II = 1
    if (pos == have) {
      ap_axiu<W, 0, 0, 0> b = in.read();
      unsigned valid = 0;
      bool run = true;
      for (int k = 0; k < W / 8; ++k) {
#pragma HLS UNROLL
        run = run && b.keep[k];
        valid += run ? 1 : 0;
      }
      if (bytes - done < valid) valid = bytes - done;
      beat = valid == 0 ? ap_uint<W>(0) : ap_uint<W>(b.data & (~ap_uint<W>(0) >> (W - 8 * valid)));
      have = valid;
      pos = 0;
    }
    unsigned n = have - pos;
    if (64 - fill < n) n = 64 - fill;
    word |= ap_uint<512>(beat >> (8 * pos)) << (8 * fill);
    pos += n;
    fill += n;
    done += n;
    if (fill == 64 || done == bytes) {
      if (done == bytes) word |= tail;
      words.write(word);
      word = 0;
      fill = 0;
    }
  }
}

// A function of its own, kept so, because a DATAFLOW region may hold only the
// processes and their streams, not s2mm's read of the last word.
template <int W>
void s2mm_flow(ap_uint<512>* mem, hls::stream<ap_axiu<W, 0, 0, 0>>& in, unsigned bytes, ap_uint<512> tail) {
#pragma HLS INLINE off
#pragma HLS DATAFLOW
  hls::stream<ap_uint<512>> words("s2mm_words");
#pragma HLS STREAM variable = words depth = 64
  beats_to_words<W>(in, words, bytes, tail);
  write_words(mem, words, bytes);
}

}  // namespace detail

// DDR -> stream: `bytes` bytes from `mem` as W-bit beats, TLAST closing every
// frame of `frame_bytes` bytes (a multiple of W/8) and the transfer.
template <int W>
void mm2s(const ap_uint<512>* mem, hls::stream<ap_axiu<W, 0, 0, 0>>& out, unsigned int bytes,
          unsigned int frame_bytes) {
#pragma HLS DATAFLOW
  static_assert(W % 8 == 0 && 8 <= W && W <= 1024, "mm2s<W>: W a multiple of 8 in [8, 1024]");
  hls::stream<ap_uint<512>> words("mm2s_words");
#pragma HLS STREAM variable = words depth = 64
  detail::read_words(mem, words, bytes);
  detail::words_to_beats<W>(words, out, bytes, frame_bytes);
}

// Stream -> DDR: beats until `bytes` bytes are stored at `mem`; the rest of the
// last 64-byte word keeps its value (read before, written back merged).
template <int W>
void s2mm(ap_uint<512>* mem, hls::stream<ap_axiu<W, 0, 0, 0>>& in, unsigned int bytes) {
  static_assert(W % 8 == 0 && 8 <= W && W <= 1024, "s2mm<W>: W a multiple of 8 in [8, 1024]");
  ap_uint<512> tail = 0;
  const unsigned rest = bytes % 64;
  if (rest != 0) tail = mem[bytes / 64] & ~detail::low_bytes(rest);
  detail::s2mm_flow<W>(mem, in, bytes, tail);
}

}  // namespace movers
}  // namespace mixtd

#endif  // MIXTD_HLS_MOVERS_H
