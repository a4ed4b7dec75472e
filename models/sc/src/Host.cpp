#include "mixtd/sc/Host.h"

#include <algorithm>
#include <cmath>

#include "mixtd/support/Error.h"

namespace mixtd::sc {

namespace {

Cycle to_cycles(const sc_core::sc_time& t, const SimContext& ctx) {
  return static_cast<Cycle>(std::llround(t.to_seconds() * ctx.clock_mhz * 1e6));
}

sc_core::sc_time cycles(Cycle n, const SimContext& ctx) {
  return sc_core::sc_time(static_cast<double>(n) * ctx.period_ps(), sc_core::SC_PS);
}

// Bytes per DMA burst of the host interface.
constexpr std::int64_t kBurstBytes = 4096;
// Largest b_transport of a weight preload.
constexpr std::int64_t kPreloadChunk = 4096;

}  // namespace

HostMemory::HostMemory(sc_core::sc_module_name name, std::int64_t size, double bytes_per_cycle, std::int64_t latency,
                       SimContext& ctx)
    : sc_module(name), socket("socket"), bytes_per_cycle_(bytes_per_cycle), latency_(latency), ctx_(ctx) {
  bytes.assign(static_cast<std::size_t>(size), 0);
  socket.register_b_transport(this, &HostMemory::b_transport);
}

void HostMemory::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const auto addr = static_cast<std::int64_t>(trans.get_address());
  const auto len = static_cast<std::int64_t>(trans.get_data_length());
  if (addr < 0 || addr + len > static_cast<std::int64_t>(bytes.size())) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  auto* mem = reinterpret_cast<unsigned char*>(bytes.data()) + addr;
  if (trans.is_read())
    std::copy(mem, mem + len, trans.get_data_ptr());
  else if (trans.is_write())
    std::copy(trans.get_data_ptr(), trans.get_data_ptr() + len, mem);
  delay += cycles(latency_ + static_cast<Cycle>(std::ceil(static_cast<double>(len) / bytes_per_cycle_)), ctx_);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

WeightLoader::WeightLoader(sc_core::sc_module_name name, SimContext& ctx)
    : sc_module(name), socket("socket"), ctx_(ctx) {
  SC_THREAD(run);
}

void WeightLoader::run() {
  std::vector<unsigned char> zeros(static_cast<std::size_t>(kPreloadChunk), 0);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  for (int target = 0; target < static_cast<int>(socket.size()); ++target) {
    const std::int64_t size = sizes.at(static_cast<std::size_t>(target));
    for (std::int64_t a = 0; a < size; a += kPreloadChunk) {
      tlm::tlm_generic_payload trans;
      const std::int64_t len = std::min(kPreloadChunk, size - a);
      auto* src = images.empty()
                      ? zeros.data()
                      : reinterpret_cast<unsigned char*>(images[static_cast<std::size_t>(target)].data()) + a;
      trans.set_command(tlm::TLM_WRITE_COMMAND);
      trans.set_address(static_cast<sc_dt::uint64>(a));
      trans.set_data_ptr(src);
      trans.set_data_length(static_cast<unsigned>(len));
      trans.set_streaming_width(static_cast<unsigned>(len));
      trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      socket[target]->b_transport(trans, delay);
      require(trans.is_response_ok(), std::string(name()) + ": weight preload of engine " + std::to_string(target) +
                                          " failed at byte " + std::to_string(a));
    }
  }
  done_cycle = to_cycles(delay, ctx_);
  done.notify(sc_core::SC_ZERO_TIME);
}

HostIn::HostIn(sc_core::sc_module_name name, std::int64_t frame_words, std::int64_t width, std::int64_t frames,
               const HostStalls& stalls, WeightLoader* loader, SimContext& ctx)
    : sc_module(name),
      socket("socket"),
      frame_words_(frame_words),
      width_(width),
      frames_(frames),
      stalls_(stalls),
      loader_(loader),
      ctx_(ctx) {
  SC_THREAD(run);
}

void HostIn::run() {
  Cycle start = 0;
  if (loader_) {
    if (loader_->done_cycle < 0) sc_core::wait(loader_->done);
    start = loader_->done_cycle;
  }
  Rng rng(stalls_.seed);
  const std::int64_t burst_beats = std::max<std::int64_t>(1, kBurstBytes / width_);
  const std::int64_t beats = frame_words_ / width_;
  std::vector<std::int8_t> burst(static_cast<std::size_t>(burst_beats * width_));
  // Two burst buffers: burst n is fetched once burst n − 2 has been streamed.
  std::vector<Cycle> drained(2, start);
  Cycle dma = start;
  std::int64_t n = 0;
  for (std::int64_t f = 0; f < frames_; ++f)
    for (std::int64_t b0 = 0; b0 < beats; b0 += burst_beats, ++n) {
      const std::int64_t count = std::min(burst_beats, beats - b0);
      dma = std::max(dma, drained[static_cast<std::size_t>(n % 2)]);
      tlm::tlm_generic_payload trans;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      trans.set_command(tlm::TLM_READ_COMMAND);
      trans.set_address(static_cast<sc_dt::uint64>((f * beats + b0) * width_));
      trans.set_data_ptr(reinterpret_cast<unsigned char*>(burst.data()));
      trans.set_data_length(static_cast<unsigned>(count * width_));
      trans.set_streaming_width(static_cast<unsigned>(count * width_));
      trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      socket->b_transport(trans, delay);
      require(trans.is_response_ok(), std::string(name()) + ": DMA read of frame " + std::to_string(f) + " failed");
      dma += to_cycles(delay, ctx_);
      Cycle t = dma;
      for (std::int64_t b = 0; b < count; ++b) {
        Cycle ready = dma;
        if (stalls_.probability > 0 && rng.uniform() < stalls_.probability)
          ready = std::max(ready, out_.last() + 1) + 1 +
                  static_cast<Cycle>(rng.below(static_cast<std::uint64_t>(stalls_.max_cycles)));
        t = out_.write(ready, ctx_.data ? &burst[static_cast<std::size_t>(b * width_)] : nullptr);
        if (b0 == 0 && b == 0) first.push_back(t);
        ++stats.busy;
        stats.active(t);
      }
      drained[static_cast<std::size_t>(n % 2)] = t + 1;
    }
}

HostOut::HostOut(sc_core::sc_module_name name, std::int64_t frame_words, std::int64_t bus_words, std::int64_t frames,
                 std::int64_t result_base, const HostStalls& stalls, SimContext& ctx)
    : sc_module(name),
      socket("socket"),
      frame_words_(frame_words),
      bus_words_(bus_words),
      frames_(frames),
      result_base_(result_base),
      stalls_(stalls),
      ctx_(ctx) {
  SC_THREAD(run);
}

void HostOut::run() {
  Rng rng(stalls_.seed ^ 0x5eedULL);
  const std::int64_t beats = frame_words_ / bus_words_;
  std::vector<std::int8_t> frame(static_cast<std::size_t>(frame_words_));
  for (std::int64_t f = 0; f < frames_; ++f) {
    Cycle t = 0;
    for (std::int64_t b = 0; b < beats; ++b) {
      Cycle earliest = 0;
      if (stalls_.probability > 0 && rng.uniform() < stalls_.probability)
        earliest = in_.last() + 2 + static_cast<Cycle>(rng.below(static_cast<std::uint64_t>(stalls_.max_cycles)));
      t = in_.read(earliest, ctx_.data ? &frame[static_cast<std::size_t>(b * bus_words_)] : nullptr);
      if (b == 0) first.push_back(t);
      ++stats.busy;
    }
    last.push_back(t);
    // The result frame goes back to DDR (its cost is off the critical path:
    // the output stream is already drained).
    tlm::tlm_generic_payload trans;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    trans.set_command(tlm::TLM_WRITE_COMMAND);
    trans.set_address(static_cast<sc_dt::uint64>(result_base_ + f * frame_words_));
    trans.set_data_ptr(reinterpret_cast<unsigned char*>(frame.data()));
    trans.set_data_length(static_cast<unsigned>(frame_words_));
    trans.set_streaming_width(static_cast<unsigned>(frame_words_));
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(trans, delay);
    require(trans.is_response_ok(), std::string(name()) + ": DMA write of result " + std::to_string(f) + " failed");
    ++frames_done;
  }
}

}  // namespace mixtd::sc
