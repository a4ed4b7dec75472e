#include "mixtd/sc/LineBuffer.h"

#include <algorithm>

#include "mixtd/arch/Timing.h"
#include "mixtd/support/Error.h"

namespace mixtd::sc {

LineBuffer::LineBuffer(sc_core::sc_module_name name, const WindowShape& s, std::int64_t width, std::int64_t frames,
                       SimContext& ctx)
    : sc_module(name), shape_(s), width_(width), frames_(frames), ctx_(ctx) {
  require(s.c % width == 0, std::string(this->name()) + ": input width " + std::to_string(width) + " must divide the " +
                                std::to_string(s.c) + " words of a pixel");
  cap_ = capacity(s);
  const std::int64_t ho = s.out_h(), wo = s.out_w(), nw = ho * wo;
  last_needed_.resize(static_cast<std::size_t>(nw));
  std::vector<std::int64_t> first(static_cast<std::size_t>(nw));
  for (std::int64_t i = 0; i < ho; ++i)
    for (std::int64_t j = 0; j < wo; ++j) {
      const std::int64_t r0 = std::clamp(i * s.sh - s.ph, std::int64_t{0}, s.h - 1);
      const std::int64_t c0 = std::clamp(j * s.sw - s.pw, std::int64_t{0}, s.w - 1);
      const std::int64_t r1 = std::clamp(i * s.sh - s.ph + s.kh - 1, std::int64_t{0}, s.h - 1);
      const std::int64_t c1 = std::clamp(j * s.sw - s.pw + s.kw - 1, std::int64_t{0}, s.w - 1);
      first[static_cast<std::size_t>(i * wo + j)] = r0 * s.w + c0;
      last_needed_[static_cast<std::size_t>(i * wo + j)] = r1 * s.w + c1;
    }
  // A pixel's slot may be reused once the last window reading it has been
  // released: for (r, q) that is window (⌊(r+ph)/sh⌋, ⌊(q+pw)/sw⌋), clamped
  // to the output. A pixel no window reads (stride beyond the kernel, rows
  // cut off at the bottom) is dropped on arrival (run()); the slot at its
  // index may be reused once the windows whose first pixel precedes it are.
  windows_by_pixel_.resize(static_cast<std::size_t>(s.pixels()));
  read_.resize(static_cast<std::size_t>(s.pixels()));
  std::vector<std::int64_t> before(static_cast<std::size_t>(s.pixels()) + 1, 0);
  for (std::int64_t k = 0; k < nw; ++k) {
    auto& b = before[static_cast<std::size_t>(first[static_cast<std::size_t>(k)])];
    b = std::max(b, k + 1);
  }
  std::int64_t running = 0;
  for (std::int64_t x = 0; x < s.pixels(); ++x) {
    running = std::max(running, before[static_cast<std::size_t>(x)]);
    const std::int64_t r = x / s.w, q = x % s.w;
    const std::int64_t i = std::min(ho - 1, (r + s.ph) / s.sh), j = std::min(wo - 1, (q + s.pw) / s.sw);
    const bool used = r >= i * s.sh - s.ph && r <= i * s.sh - s.ph + s.kh - 1 && q >= j * s.sw - s.pw &&
                      q <= j * s.sw - s.pw + s.kw - 1;
    windows_by_pixel_[static_cast<std::size_t>(x)] = used ? i * wo + j + 1 : running;
    read_[static_cast<std::size_t>(x)] = used;
  }
  for (std::int64_t j = 0; j < nw; ++j)
    require(last_needed_[static_cast<std::size_t>(j)] - first[static_cast<std::size_t>(j)] < cap_,
            std::string(this->name()) + ": a window spans more pixels than the line buffer holds");
  if (ctx.data) ring_.assign(static_cast<std::size_t>(cap_ * s.c), 0);
  arrival_.assign(static_cast<std::size_t>(cap_), 0);
  released_.assign(static_cast<std::size_t>(nw * (2 + (cap_ + s.pixels() - 1) / s.pixels()) + 4), 0);
  SC_THREAD(run);
}

std::int64_t LineBuffer::capacity(const WindowShape& s) {
  return arch::line_buffer_capacity(s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.h, s.w);
}

std::int64_t LineBuffer::last_needed(std::int64_t j) const { return last_needed_[static_cast<std::size_t>(j)]; }

void LineBuffer::run() {
  const WindowShape& s = shape_;
  const std::int64_t hw = s.pixels(), nw = s.windows(), beats = s.c / width_;
  std::vector<std::int8_t> words(static_cast<std::size_t>(width_));
  for (std::int64_t f = 0; f < frames_; ++f)
    for (std::int64_t x = 0; x < hw; ++x) {
      const std::int64_t g = f * hw + x;
      // A pixel no window reads (beyond the kernel at a stride, or cut off
      // at the bottom or right) is dropped as it arrives: it takes no slot,
      // so a strided 1x1 conv skips its odd rows while it computes.
      if (!read_[static_cast<std::size_t>(x)]) {
        for (std::int64_t b = 0; b < beats; ++b) {
          in_.read(0, ring_.empty() ? nullptr : words.data());
          ++stats.busy;
        }
        ++pixels_in_;
        if (waiting_pixel_) pixel_ev_.notify();
        continue;
      }
      // The slot of pixel g held pixel g − cap: free once every window whose
      // first pixel is at or before it has been released.
      Cycle free = 0;
      if (g >= cap_) {
        const std::int64_t old = g - cap_;
        const std::int64_t need = (old / hw) * nw + windows_by_pixel_[static_cast<std::size_t>(old % hw)];
        while (windows_released_ < need) {
          waiting_space_ = true;
          sc_core::wait(release_ev_);
        }
        waiting_space_ = false;
        if (need > 0)
          free = released_[static_cast<std::size_t>((need - 1) % static_cast<std::int64_t>(released_.size()))] + 1;
      }
      const std::size_t slot = static_cast<std::size_t>(g % cap_);
      Cycle t = 0;
      for (std::int64_t b = 0; b < beats; ++b) {
        // Waiting for the slot is back-pressure from the compute side.
        if (b == 0 && in_.last() >= 0 && free > in_.last() + 1) stats.stall_out += free - (in_.last() + 1);
        t = in_.read(free, ring_.empty() ? nullptr : words.data());
        if (!ring_.empty())
          std::copy(words.begin(), words.end(), ring_.begin() + static_cast<std::ptrdiff_t>(slot * s.c + b * width_));
        ++stats.busy;
      }
      arrival_[slot] = t + 1;
      ++pixels_in_;
      if (waiting_pixel_) pixel_ev_.notify();
    }
}

Cycle LineBuffer::wait_window(std::int64_t w) {
  const WindowShape& s = shape_;
  const std::int64_t nw = s.windows();
  const std::int64_t g = (w / nw) * s.pixels() + last_needed(w % nw);
  while (pixels_in_ <= g) {
    waiting_pixel_ = true;
    sc_core::wait(pixel_ev_);
  }
  waiting_pixel_ = false;
  return arrival_[static_cast<std::size_t>(g % cap_)];
}

std::int8_t LineBuffer::at(std::int64_t w, std::int64_t r, std::int64_t q, std::int64_t ch) const {
  const WindowShape& s = shape_;
  if (r < 0 || r >= s.h || q < 0 || q >= s.w) return 0;  // zero padding
  const std::int64_t g = (w / s.windows()) * s.pixels() + r * s.w + q;
  return ring_[static_cast<std::size_t>((g % cap_) * s.c + ch)];
}

void LineBuffer::release(std::int64_t w, Cycle t) {
  released_[static_cast<std::size_t>(w % static_cast<std::int64_t>(released_.size()))] = t;
  windows_released_ = w + 1;
  if (waiting_space_) release_ev_.notify();
}

}  // namespace mixtd::sc
