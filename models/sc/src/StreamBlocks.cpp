#include "mixtd/sc/StreamBlocks.h"

#include <algorithm>

#include "mixtd/arch/Timing.h"
#include "mixtd/support/Error.h"

namespace mixtd::sc {

namespace {
constexpr std::int64_t kBufferedPixels = 2;
}

StreamBlock::StreamBlock(sc_core::sc_module_name name, StreamBlockParams params, std::int64_t frames, SimContext& ctx)
    : sc_module(name), p_(std::move(params)), frames_(frames), ctx_(ctx) {
  const std::string me = this->name();
  require(words_in() % p_.width_in == 0 && words_out() % p_.width_out == 0,
          me + ": port widths " + std::to_string(p_.width_in) + "/" + std::to_string(p_.width_out) +
              " must divide the words per pixel " + std::to_string(words_in()) + "/" + std::to_string(words_out()));
  in_.resize(static_cast<std::size_t>(p_.ports_in));
  out_.resize(static_cast<std::size_t>(p_.ports_out));
  SC_THREAD(run);
}

std::int64_t StreamBlock::words_in() const { return p_.channels / p_.groups_in; }
std::int64_t StreamBlock::words_out() const { return p_.channels / p_.groups_out; }

void StreamBlock::bind_input(std::int64_t port, BeatFifo* fifo) {
  in_.at(static_cast<std::size_t>(port)) = InPort(fifo, p_.width_in, &stats);
}

void StreamBlock::bind_output(std::int64_t port, std::vector<BeatFifo*> fifos) {
  out_.at(static_cast<std::size_t>(port)) = OutPort(std::move(fifos), p_.width_out, nullptr, &ctx_);
}

void StreamBlock::run() {
  const auto np = static_cast<std::size_t>(p_.ports_in);
  const std::int64_t win = words_in(), wout = words_out();
  const std::int64_t beats_in = win / p_.width_in, beats_out = wout / p_.width_out;
  const bool data = ctx_.data;
  std::vector<std::vector<std::int8_t>> buf(np, std::vector<std::int8_t>(data ? static_cast<std::size_t>(win) : 0));
  std::vector<std::vector<Cycle>> when(np, std::vector<Cycle>(static_cast<std::size_t>(beats_in)));
  std::vector<std::int8_t> words(static_cast<std::size_t>(p_.width_out));
  std::vector<Cycle> done(kBufferedPixels, -1);
  const int e_min = p_.in_exps.empty() ? 0 : *std::min_element(p_.in_exps.begin(), p_.in_exps.end());
  const std::int64_t total = frames_ * p_.pixels;
  for (std::int64_t x = 0; x < total; ++x) {
    // Pixel x may enter once pixel x − 2 has left the pipeline registers
    // (latency cycles deep) for the output register.
    const Cycle free = x >= kBufferedPixels ? done[static_cast<std::size_t>(x % kBufferedPixels)] + 1 - p_.latency : 0;
    for (std::size_t q = 0; q < np; ++q)
      for (std::int64_t b = 0; b < beats_in; ++b)
        when[q][static_cast<std::size_t>(b)] =
            in_[q].read(free, data ? &buf[q][static_cast<std::size_t>(b * p_.width_in)] : nullptr);
    // Where output word i of port k comes from (port, word), by the strided
    // channel-group convention; the adders take word i of every port.
    auto source = [&](std::int64_t k, std::int64_t i) -> std::pair<std::int64_t, std::int64_t> {
      switch (p_.routing) {
        case Routing::Split:
          return {0, k + i * p_.groups_out};
        case Routing::Merge:
          return {i % p_.groups_in, i / p_.groups_in};
        case Routing::Regroup: {
          const std::int64_t c = k + i * p_.groups_out;
          return {c % p_.groups_in, c / p_.groups_in};
        }
        default:
          return {0, i};
      }
    };
    const bool all_ports = p_.routing == Routing::GroupAdd || p_.routing == Routing::EltwiseAdd;
    Cycle finished = -1;
    for (std::int64_t k = 0; k < p_.ports_out; ++k)
      for (std::int64_t b = 0; b < beats_out; ++b) {
        Cycle ready = -1;
        for (std::int64_t l = 0; l < p_.width_out; ++l) {
          const std::int64_t i = b * p_.width_out + l;
          if (all_ports) {
            std::int64_t sum = 0;
            for (std::size_t q = 0; q < np; ++q) {
              ready = std::max(ready, when[q][static_cast<std::size_t>(i / p_.width_in)]);
              if (!data) continue;
              const std::int8_t v = buf[q][static_cast<std::size_t>(i)];
              sum += p_.routing == Routing::GroupAdd ? std::int64_t{v} : numerics::align(v, p_.in_exps[q], e_min);
            }
            if (data)
              words[static_cast<std::size_t>(l)] = numerics::requantize(
                  sum, p_.routing == Routing::GroupAdd ? p_.requant[static_cast<std::size_t>(i)] : p_.add_requant);
          } else {
            const auto [q, j] = source(k, i);
            ready = std::max(ready, when[static_cast<std::size_t>(q)][static_cast<std::size_t>(j / p_.width_in)]);
            if (data) {
              const std::int8_t v = buf[static_cast<std::size_t>(q)][static_cast<std::size_t>(j)];
              words[static_cast<std::size_t>(l)] = p_.routing == Routing::Relu ? std::max<std::int8_t>(v, 0) : v;
            }
          }
        }
        finished = std::max(finished, out_[static_cast<std::size_t>(k)].write(ready + p_.latency, words.data()));
      }
    done[static_cast<std::size_t>(x % kBufferedPixels)] = finished;
    stats.busy += std::max(beats_in, beats_out);
    stats.active(finished);
  }
}

GlobalAvgPool::GlobalAvgPool(sc_core::sc_module_name name, std::int64_t channels, std::int64_t pixels,
                             std::int64_t width, std::int64_t frames, SimContext& ctx)
    : sc_module(name), channels_(channels), pixels_(pixels), width_(width), frames_(frames), ctx_(ctx) {
  require(channels % width == 0, std::string(this->name()) + ": width " + std::to_string(width) + " must divide " +
                                     std::to_string(channels) + " channels");
  SC_THREAD(run);
}

void GlobalAvgPool::run() {
  const std::int64_t beats = channels_ / width_;
  std::vector<std::int64_t> sum(static_cast<std::size_t>(channels_));
  std::vector<std::int8_t> words(static_cast<std::size_t>(width_));
  for (std::int64_t f = 0; f < frames_; ++f) {
    std::fill(sum.begin(), sum.end(), 0);
    Cycle t = 0;
    for (std::int64_t x = 0; x < pixels_; ++x)
      for (std::int64_t b = 0; b < beats; ++b) {
        t = in_.read(0, ctx_.data ? words.data() : nullptr);
        ++stats.busy;
        if (ctx_.data)
          for (std::int64_t l = 0; l < width_; ++l)
            sum[static_cast<std::size_t>(b * width_ + l)] += words[static_cast<std::size_t>(l)];
      }
    // The mean is ready one cycle after the frame's last word (Timing.h:
    // fill = the frame's input cycles + kStreamLatency).
    const Cycle ready = t + 1 + arch::kStreamLatency;
    for (std::int64_t b = 0; b < beats; ++b) {
      if (ctx_.data)
        for (std::int64_t l = 0; l < width_; ++l)
          words[static_cast<std::size_t>(l)] =
              numerics::average(sum[static_cast<std::size_t>(b * width_ + l)], pixels_);
      stats.active(out_.write(ready, words.data()));
    }
  }
}

}  // namespace mixtd::sc
