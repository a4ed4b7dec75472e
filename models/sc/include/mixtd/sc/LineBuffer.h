// LineBuffer: the input buffer of a windowed block (conv stage, pooling).
//
// It takes the input stream pixel by pixel (C words each, `width` words per
// beat) into a ring of arch::line_buffer_pixels() pixels and hands complete
// kh×kw windows (with zero padding and stride; 1×k and k×1 windows too) to
// the block's compute thread in raster order. A pixel's slot is reused only
// once every window that reads it has been read for the last time, so
// back-pressure from the compute side stalls the input exactly when the
// ring is full.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "mixtd/sc/BeatFifo.h"
#include "mixtd/sc/Kernel.h"

namespace mixtd::sc {

struct WindowShape {
  std::int64_t c = 1, h = 1, w = 1;  // input tensor per frame (c: words per pixel)
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  std::int64_t out_h() const { return (h + 2 * ph - kh) / sh + 1; }
  std::int64_t out_w() const { return (w + 2 * pw - kw) / sw + 1; }
  std::int64_t windows() const { return out_h() * out_w(); }
  std::int64_t pixels() const { return h * w; }
};

class LineBuffer : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(LineBuffer);
  LineBuffer(sc_core::sc_module_name name, const WindowShape& shape, std::int64_t width, std::int64_t frames,
             SimContext& ctx);

  void bind_input(BeatFifo* fifo) { in_ = InPort(fifo, width_, &stats); }

  // Compute side (called from the compute thread). Window w counts across
  // frames. wait_window() blocks until its last pixel is in and returns the
  // first cycle it can be computed.
  Cycle wait_window(std::int64_t w);
  // Word (channel ch) of input pixel (row r, col q) of window w's frame; 0
  // for padding. Valid between wait_window(w) and release(w).
  std::int8_t at(std::int64_t w, std::int64_t r, std::int64_t q, std::int64_t ch) const;
  // Window w no longer needs the buffer from cycle t on.
  void release(std::int64_t w, Cycle t);

  // The pixels it holds (the RTL line buffer's CAP is this number).
  static std::int64_t capacity(const WindowShape& s);
  const WindowShape& shape() const { return shape_; }
  std::int64_t capacity_pixels() const { return cap_; }
  ThreadStats stats;
  bool waiting_for_space() const { return waiting_space_; }
  bool waiting_for_input() const { return in_.fifo() && in_.fifo()->reader_waiting(); }
  BeatFifo* input() const { return in_.fifo(); }

 private:
  void run();
  std::int64_t last_needed(std::int64_t j) const;  // within a frame

  WindowShape shape_;
  std::int64_t width_, frames_;
  SimContext& ctx_;
  InPort in_;
  std::int64_t cap_;
  std::vector<bool> read_;                      // per pixel: some window reads it
  std::vector<std::int64_t> windows_by_pixel_;  // per pixel: windows to release before its slot is reused
  std::vector<std::int64_t> last_needed_;       // per window
  std::vector<std::int8_t> ring_;               // cap_ pixels × c words (data mode)
  std::vector<Cycle> arrival_;                  // per ring slot: cycle the pixel is complete
  std::vector<Cycle> released_;                 // per window (ring): cycle it was released
  std::int64_t pixels_in_ = 0, windows_released_ = 0;
  bool waiting_space_ = false, waiting_pixel_ = false;
  sc_core::sc_event pixel_ev_, release_ev_;
};

}  // namespace mixtd::sc
