#include "mixtd/sc/Stage.h"

#include <algorithm>
#include <cstring>

#include "mixtd/arch/Timing.h"
#include "mixtd/support/Error.h"

namespace mixtd::sc {

namespace {
// Results the accumulator/requantiser pipeline holds while the output stalls.
constexpr std::int64_t kResultSlots = 2;
}  // namespace

WindowCompute::WindowCompute(sc_core::sc_module_name name, LineBuffer& lb, std::int64_t frames, SimContext& ctx)
    : sc_module(name), lb_(lb), ctx_(ctx), frames_(frames) {
  SC_THREAD(run);
}

bool WindowCompute::waiting_for_output() const {
  for (const BeatFifo* f : out_.fifos())
    if (f->writer_waiting()) return true;
  return false;
}

void WindowCompute::run() {
  const std::int64_t nw = lb_.shape().windows(), wo = lb_.shape().out_w();
  const std::int64_t blocks = blocks_per_window(), cost = block_cycles(), pipe = pipeline();
  const std::int64_t width = out_width();
  std::vector<std::int8_t> words(ctx_.data ? static_cast<std::size_t>(blocks * width) : 0);
  std::vector<Cycle> sent(kResultSlots, -1);  // output cycles of the last beats
  std::int64_t beat = 0;
  Cycle end = 0;
  for (std::int64_t w = 0; w < frames_ * nw; ++w) {
    const Cycle ready = lb_.wait_window(w);
    const std::int64_t j = w % nw;
    if (ctx_.data)
      for (std::int64_t b = 0; b < blocks; ++b)
        compute(w, j / wo, j % wo, b, &words[static_cast<std::size_t>(b * width)]);
    for (std::int64_t b = 0; b < blocks; ++b, ++beat) {
      const Cycle room = beat >= kResultSlots ? sent[static_cast<std::size_t>(beat % kResultSlots)] - cost - pipe : 0;
      const Cycle window_in = b == 0 ? ready : 0;
      const Cycle start = std::max({end, window_in, room});
      if (beat > 0 && start > end) (window_in >= room ? stats.stall_in : stats.stall_out) += start - end;
      // The window's pixels are read until the last cycle of its last block;
      // only then may the line buffer reuse their slots (the RTL showed the
      // earlier release at the block's start let the input overwrite a pixel
      // the MAC units were still to read).
      if (b + 1 == blocks) lb_.release(w, start + cost - 1);
      end = start + cost;
      stats.busy += cost;
      stats.active(start);
      const Cycle t = out_.write(end + pipe, ctx_.data ? &words[static_cast<std::size_t>(b * width)] : nullptr);
      sent[static_cast<std::size_t>(beat % kResultSlots)] = t;
      stats.active(t);
    }
  }
}

// Dense: per conv group, out/p_out blocks of (in/p_in)·(kh·kw/fine) cycles.
std::int64_t MacArray::blocks_per_window() const { return p_.groups * ((p_.out_ch / p_.groups) / p_.p_out); }
std::int64_t MacArray::block_cycles() const {
  const WindowShape& s = lb_.shape();
  return arch::ceil_div(p_.in_ch / p_.groups, p_.p_in) * arch::ceil_div(s.kh * s.kw, p_.fine);
}
std::int64_t MacArray::pipeline() const { return arch::kMacPipeline + arch::kRequantPipeline; }

void MacArray::compute(std::int64_t w, std::int64_t i, std::int64_t j, std::int64_t b, std::int8_t* out) {
  const WindowShape& s = lb_.shape();
  const std::int64_t cin = p_.in_ch / p_.groups, cout = p_.out_ch / p_.groups;
  for (std::int64_t l = 0; l < p_.p_out; ++l) {
    const std::int64_t o = b * p_.p_out + l, g = o / cout;
    std::int64_t acc = 0;
    for (std::int64_t c = 0; c < cin; ++c)
      for (std::int64_t u = 0; u < s.kh; ++u)
        for (std::int64_t v = 0; v < s.kw; ++v) {
          const std::int8_t x = lb_.at(w, i * s.sh + u - s.ph, j * s.sw + v - s.pw, g * cin + c);
          if (x) acc += std::int64_t{p_.weight[static_cast<std::size_t>(((o * cin + c) * s.kh + u) * s.kw + v)]} * x;
        }
    out[l] = p_.requant(acc, o);
  }
}

// Depthwise: in/p_in blocks of kh·kw/fine cycles, p_in channels each.
std::int64_t OuterProductArray::blocks_per_window() const { return p_.in_ch / p_.p_in; }
std::int64_t OuterProductArray::block_cycles() const {
  const WindowShape& s = lb_.shape();
  return arch::ceil_div(s.kh * s.kw, p_.fine);
}

void OuterProductArray::compute(std::int64_t w, std::int64_t i, std::int64_t j, std::int64_t b, std::int8_t* out) {
  const WindowShape& s = lb_.shape();
  for (std::int64_t l = 0; l < p_.p_in; ++l) {
    const std::int64_t c = b * p_.p_in + l;
    std::int64_t acc = 0;
    for (std::int64_t u = 0; u < s.kh; ++u)
      for (std::int64_t v = 0; v < s.kw; ++v)
        acc += std::int64_t{p_.weight[static_cast<std::size_t>((c * s.kh + u) * s.kw + v)]} *
               lb_.at(w, i * s.sh + u - s.ph, j * s.sw + v - s.pw, c);
    out[l] = p_.requant(acc, c);
  }
}

std::int64_t PoolUnit::pipeline() const { return arch::kStreamLatency - 1; }

void PoolUnit::compute(std::int64_t w, std::int64_t i, std::int64_t j, std::int64_t b, std::int8_t* out) {
  const WindowShape& s = lb_.shape();
  for (std::int64_t l = 0; l < p_.p; ++l) {
    const std::int64_t c = b * p_.p + l;
    std::int64_t best = numerics::kMantissaMin, sum = 0, count = 0;
    for (std::int64_t u = 0; u < s.kh; ++u)
      for (std::int64_t v = 0; v < s.kw; ++v) {
        const std::int64_t r = i * s.sh + u - s.ph, q = j * s.sw + v - s.pw;
        if (r >= 0 && r < s.h && q >= 0 && q < s.w) {
          const std::int8_t x = lb_.at(w, r, q, c);
          best = std::max<std::int64_t>(best, x);
          sum += x;
          ++count;
        } else if (p_.count_include_pad) {
          ++count;
        }
      }
    out[l] = p_.max ? static_cast<std::int8_t>(best) : numerics::average(sum, count);
  }
}

Stage::Stage(sc_core::sc_module_name name, const WindowShape& in, StageParams params, std::int64_t frames,
             SimContext& ctx)
    : sc_module(name), weights_socket("weights"), params_(std::move(params)), ctx_(ctx) {
  weights_socket.register_b_transport(this, &Stage::b_transport);
  lb_ = std::make_unique<LineBuffer>("line_buffer", in, params_.p_in, frames, ctx);
  if (params_.depthwise)
    mac_ = std::make_unique<OuterProductArray>("outer_product_array", *lb_, params_, frames, ctx);
  else
    mac_ = std::make_unique<MacArray>("mac_array", *lb_, params_, frames, ctx);
  if (ctx.data) params_.weight.assign(static_cast<std::size_t>(weight_bytes()), 0);
}

std::int64_t Stage::weight_bytes() const {
  const WindowShape& s = lb_->shape();
  return params_.out_ch * (params_.depthwise ? 1 : params_.in_ch / params_.groups) * s.kh * s.kw;
}

void Stage::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const auto addr = static_cast<std::int64_t>(trans.get_address());
  const auto len = static_cast<std::int64_t>(trans.get_data_length());
  if (trans.get_command() != tlm::TLM_WRITE_COMMAND || addr < 0 || addr + len > weight_bytes()) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (!params_.weight.empty() && trans.get_data_ptr())
    std::memcpy(&params_.weight[static_cast<std::size_t>(addr)], trans.get_data_ptr(), static_cast<std::size_t>(len));
  // One memory word per cycle: all the multipliers' banks share an address.
  const std::int64_t word =
      params_.depthwise ? params_.p_in * params_.fine : params_.p_in * params_.p_out * params_.fine;
  delay += sc_core::sc_time(
      static_cast<double>(arch::ceil_div(len, std::max<std::int64_t>(1, word))) * ctx_.period_ps(), sc_core::SC_PS);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

Pool::Pool(sc_core::sc_module_name name, const WindowShape& in, const PoolParams& params, std::int64_t frames,
           SimContext& ctx)
    : sc_module(name), lb_("line_buffer", in, params.p, frames, ctx), unit_("pool_unit", lb_, params, frames, ctx) {}

}  // namespace mixtd::sc
