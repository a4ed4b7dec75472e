#include "mixtd/arch/Timing.h"

#include <cmath>

namespace mixtd::arch {

std::int64_t stage_multipliers(const td::StageShape& s, const Psi& psi) {
  return s.depthwise ? psi.p_in * psi.fine : psi.p_in * psi.p_out * psi.fine;
}

std::int64_t window_fill_words(const td::StageShape& s) {
  const std::int64_t rows = std::max<std::int64_t>(0, s.kh - 1 - s.ph);
  const std::int64_t cols = std::max<std::int64_t>(1, s.kw - s.pw);
  return std::max(s.in.c, (rows * s.in.w + cols) * s.in.c);
}

std::int64_t line_buffer_pixels(std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t ph,
                                std::int64_t pw, std::int64_t h, std::int64_t w) {
  // A row-strided 1-row window drops sh − 1 rows between its rows of
  // windows; one more row of slots lets them stream past while it computes.
  const std::int64_t dropped_rows = kh == 1 && sh > 1 ? w : 0;
  std::int64_t base = (kh - 1 + sh) * w;
  if (kh == 1 && kw == 1)
    base = 2 + dropped_rows;
  else if (kh == 1)
    base = kw + sw + dropped_rows;
  // Across frames: while the last window of a frame is computed, the first
  // window of the next must be able to fill.
  const std::int64_t ho = (h + 2 * ph - kh) / sh + 1, wo = (w + 2 * pw - kw) / sw + 1;
  const std::int64_t r0 = std::clamp((ho - 1) * sh - ph, std::int64_t{0}, h - 1);
  const std::int64_t c0 = std::clamp((wo - 1) * sw - pw, std::int64_t{0}, w - 1);
  const std::int64_t fill =
      std::max<std::int64_t>(1, std::max<std::int64_t>(0, kh - 1 - ph) * w + std::max<std::int64_t>(1, kw - pw));
  return std::max(base, h * w - (r0 * w + c0) + fill);
}

std::int64_t line_buffer_capacity(std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t ph,
                                  std::int64_t pw, std::int64_t h, std::int64_t w) {
  return std::max<std::int64_t>(std::min(line_buffer_pixels(kh, kw, sh, sw, ph, pw, h, w), h * w * 2), 2);
}

StageInTerms stage_in_terms(const td::StageShape& s, std::int64_t p_in) {
  StageInTerms t;
  t.in = ceil_div(s.in.numel(), p_in);
  t.window = ceil_div(window_fill_words(s), p_in);
  t.per_in = ceil_div(s.depthwise ? s.in_ch : s.in_per_group(), p_in);
  return t;
}

StageOutTerms stage_out_terms(const td::StageShape& s, std::int64_t p_out) {
  StageOutTerms t;
  t.out = ceil_div(s.out.h * s.out.w * s.out_ch, p_out);
  if (!s.depthwise) t.per_out = ceil_div(s.out_ch / s.groups, p_out);
  return t;
}

Cycles stage_cycles(const td::StageShape& s, const StageInTerms& in, const StageOutTerms& out, std::int64_t per_fine) {
  Cycles c;
  const std::int64_t pix_out = s.out.h * s.out.w;
  c.in = in.in;
  c.out = out.out;
  std::int64_t per_pixel_first = 0;
  if (s.depthwise) {
    c.compute = pix_out * in.per_in * per_fine;
    per_pixel_first = per_fine;
  } else {
    c.compute = pix_out * s.groups * in.per_in * out.per_out * per_fine;
    per_pixel_first = in.per_in * per_fine;
  }
  c.window = in.window;
  c.fill = c.window + per_pixel_first + kMacPipeline + kRequantPipeline;
  c.tail = ceil_div(c.compute, std::max<std::int64_t>(1, pix_out)) + kMacPipeline + kRequantPipeline;
  return c;
}

Cycles stage_cycles(const td::StageShape& s, const Psi& psi) {
  return stage_cycles(s, stage_in_terms(s, psi.p_in), stage_out_terms(s, psi.p_out), stage_fine_terms(s, psi.fine));
}

Cycles pool_cycles(const net::Shape& in, const net::Shape& out, std::int64_t kh, std::int64_t kw, std::int64_t ph,
                   std::int64_t pw, std::int64_t p) {
  Cycles c;
  c.in = ceil_div(in.numel(), p);
  c.compute = ceil_div(out.numel(), p);
  c.out = ceil_div(out.numel(), p);
  const std::int64_t rows = std::max<std::int64_t>(0, kh - 1 - ph), cols = std::max<std::int64_t>(1, kw - pw);
  c.window = ceil_div(std::max(in.c, (rows * in.w + cols) * in.c), p);
  c.fill = c.window + kStreamLatency;
  c.tail = ceil_div(out.c, p) + kStreamLatency;
  return c;
}

Cycles global_pool_cycles(const net::Shape& in, std::int64_t p) {
  Cycles c;
  c.in = ceil_div(in.numel(), p);
  c.compute = c.in;
  c.out = ceil_div(in.c, p);
  c.window = c.in;
  c.fill = c.in + kStreamLatency;
  c.tail = c.out + kStreamLatency;
  return c;
}

Cycles stream_cycles(std::int64_t words_in, std::int64_t width_in, std::int64_t words_out, std::int64_t width_out) {
  Cycles c;
  c.in = ceil_div(words_in, width_in);
  c.out = ceil_div(words_out, width_out);
  c.compute = std::max(c.in, c.out);
  c.fill = kStreamLatency;
  c.tail = kStreamLatency;
  return c;
}

std::int64_t skip_fifo_depth(const Arrival& p, const Arrival& main, std::int64_t words, std::int64_t width,
                             std::int64_t pixels, std::int64_t fifo_depth, std::int64_t row) {
  const std::int64_t gap = main.first - p.first;
  if (gap <= 0) return 0;
  const std::int64_t beats = ceil_div(words, width);
  const std::int64_t at_first = ceil_div(gap * beats, std::max<std::int64_t>(1, p.last - p.first));
  const std::int64_t at_last = ceil_div(std::max<std::int64_t>(0, main.last - p.last) * beats,
                                        std::max<std::int64_t>(1, main.last - main.first));
  const auto ahead = static_cast<std::int64_t>(std::ceil((main.lead - p.lead) * static_cast<double>(beats)));
  const std::int64_t pixel = ceil_div(beats, std::max<std::int64_t>(1, pixels));
  return std::min(beats, std::max({at_first, at_last, ahead + (row + 2) * pixel})) + fifo_depth;
}

}  // namespace mixtd::arch
