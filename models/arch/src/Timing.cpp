#include "mixtd/arch/Timing.h"

namespace mixtd::arch {

std::int64_t stage_multipliers(const td::StageShape& s, const Psi& psi) {
  return s.depthwise ? psi.p_in * psi.fine : psi.p_in * psi.p_out * psi.fine;
}

std::int64_t window_fill_words(const td::StageShape& s) {
  const std::int64_t rows = std::max<std::int64_t>(0, s.kh - 1 - s.ph);
  const std::int64_t cols = std::max<std::int64_t>(1, s.kw - s.pw);
  return std::max(s.in.c, (rows * s.in.w + cols) * s.in.c);
}

std::int64_t line_buffer_pixels(std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t w) {
  if (kh == 1 && kw == 1) return 2;
  if (kh == 1) return kw + sw;
  return (kh - 1 + sh) * w;
}

Cycles stage_cycles(const td::StageShape& s, const Psi& psi) {
  Cycles c;
  const std::int64_t pix_out = s.out.h * s.out.w;
  const std::int64_t kk = s.kh * s.kw;
  c.in = ceil_div(s.in.numel(), psi.p_in);
  c.out = ceil_div(pix_out * s.out_ch, psi.p_out);
  std::int64_t per_pixel_first = 0;
  if (s.depthwise) {
    c.compute = pix_out * ceil_div(s.in_ch, psi.p_in) * ceil_div(kk, psi.fine);
    per_pixel_first = ceil_div(kk, psi.fine);
  } else {
    const std::int64_t cin = s.in_per_group(), cout = s.out_ch / s.groups;
    c.compute = pix_out * s.groups * ceil_div(cin, psi.p_in) * ceil_div(cout, psi.p_out) * ceil_div(kk, psi.fine);
    per_pixel_first = ceil_div(cin, psi.p_in) * ceil_div(kk, psi.fine);
  }
  c.fill = ceil_div(window_fill_words(s), psi.p_in) + per_pixel_first + kMacPipeline + kRequantPipeline;
  return c;
}

Cycles pool_cycles(const net::Shape& in, const net::Shape& out, std::int64_t kh, std::int64_t kw, std::int64_t ph,
                   std::int64_t pw, std::int64_t p) {
  Cycles c;
  c.in = ceil_div(in.numel(), p);
  c.compute = ceil_div(out.numel(), p);
  c.out = ceil_div(out.numel(), p);
  const std::int64_t rows = std::max<std::int64_t>(0, kh - 1 - ph), cols = std::max<std::int64_t>(1, kw - pw);
  c.fill = ceil_div(std::max(in.c, (rows * in.w + cols) * in.c), p) + kStreamLatency;
  return c;
}

Cycles global_pool_cycles(const net::Shape& in, std::int64_t p) {
  Cycles c;
  c.in = ceil_div(in.numel(), p);
  c.compute = c.in;
  c.out = ceil_div(in.c, p);
  c.fill = c.in + kStreamLatency;
  return c;
}

Cycles stream_cycles(std::int64_t words_in, std::int64_t width_in, std::int64_t words_out, std::int64_t width_out) {
  Cycles c;
  c.in = ceil_div(words_in, width_in);
  c.out = ceil_div(words_out, width_out);
  c.compute = std::max(c.in, c.out);
  c.fill = kStreamLatency;
  return c;
}

}  // namespace mixtd::arch
