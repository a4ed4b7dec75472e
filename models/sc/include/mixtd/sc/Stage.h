// The windowed blocks: a conv stage (SPEC "Stage": input buffer → MAC units
// → accumulator → requantiser) and pooling, each a LineBuffer feeding one
// compute thread.
//
//   MacArray           dense stage: each window broadcast to p_out
//                      inner-product units of p_in·fine multipliers
//   OuterProductArray  depthwise stage: p_in channels scattered over the units
//   PoolUnit           max / average pooling, p channels per cycle
//
// The compute thread walks the windows in raster order and, per window, the
// output blocks (p_out channels, or p_in for depthwise / p for pooling).
// A block takes arch::stage_cycles' per-block cycles ((C/p_in)·(kh·kw/fine)
// dense, kh·kw/fine depthwise, 1 pooling) and leaves kMacPipeline +
// kRequantPipeline cycles later as one output beat. The accumulator and the
// Requantiser are that pipeline: they hold two results, so compute runs at
// most two beats ahead of a stalled output.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <memory>
#include <tlm>
#include <vector>

#include "mixtd/numerics/Bfp8.h"
#include "mixtd/sc/LineBuffer.h"

namespace mixtd::sc {

// Per output channel: bias, shift, fused ReLU (numerics::requantize).
struct Requantiser {
  std::vector<numerics::Requant> channels;
  std::int8_t operator()(std::int64_t acc, std::int64_t ch) const {
    return numerics::requantize(acc, channels[static_cast<std::size_t>(ch)]);
  }
};

// A stage's parameters (td::StageShape plus ψ, flattened to what the
// hardware needs).
struct StageParams {
  std::int64_t in_ch = 1, out_ch = 1, groups = 1;
  bool depthwise = false;
  std::int64_t p_in = 1, p_out = 1, fine = 1;
  std::vector<std::int8_t> weight;  // [out, in/groups (1 depthwise), kh, kw]; filled by preload
  Requantiser requant;
};

class WindowCompute : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(WindowCompute);
  WindowCompute(sc_core::sc_module_name name, LineBuffer& lb, std::int64_t frames, SimContext& ctx);
  void bind_output(std::vector<BeatFifo*> fifos) { out_ = OutPort(std::move(fifos), out_width(), nullptr, &ctx_); }

  ThreadStats stats;
  bool waiting_for_output() const;
  const OutPort& output() const { return out_; }

 protected:
  virtual std::int64_t blocks_per_window() const = 0;
  virtual std::int64_t block_cycles() const = 0;
  virtual std::int64_t pipeline() const = 0;
  virtual std::int64_t out_width() const = 0;
  // The words of output block b of window (i, j) of frame-relative window w.
  virtual void compute(std::int64_t w, std::int64_t i, std::int64_t j, std::int64_t b, std::int8_t* out) = 0;

  LineBuffer& lb_;
  SimContext& ctx_;

 private:
  void run();
  std::int64_t frames_;
  OutPort out_;
};

class MacArray : public WindowCompute {
 public:
  MacArray(sc_core::sc_module_name name, LineBuffer& lb, StageParams& p, std::int64_t frames, SimContext& ctx)
      : WindowCompute(name, lb, frames, ctx), p_(p) {}

 protected:
  std::int64_t blocks_per_window() const override;
  std::int64_t block_cycles() const override;
  std::int64_t pipeline() const override;
  std::int64_t out_width() const override { return p_.p_out; }
  void compute(std::int64_t w, std::int64_t i, std::int64_t j, std::int64_t b, std::int8_t* out) override;
  StageParams& p_;
};

class OuterProductArray : public MacArray {
 public:
  using MacArray::MacArray;

 protected:
  std::int64_t blocks_per_window() const override;
  std::int64_t block_cycles() const override;
  std::int64_t out_width() const override { return p_.p_in; }
  void compute(std::int64_t w, std::int64_t i, std::int64_t j, std::int64_t b, std::int8_t* out) override;
};

struct PoolParams {
  bool max = true;
  bool count_include_pad = false;
  std::int64_t p = 1;
};

class PoolUnit : public WindowCompute {
 public:
  PoolUnit(sc_core::sc_module_name name, LineBuffer& lb, const PoolParams& p, std::int64_t frames, SimContext& ctx)
      : WindowCompute(name, lb, frames, ctx), p_(p) {}

 protected:
  std::int64_t blocks_per_window() const override { return lb_.shape().c / p_.p; }
  std::int64_t block_cycles() const override { return 1; }
  std::int64_t pipeline() const override;
  std::int64_t out_width() const override { return p_.p; }
  void compute(std::int64_t w, std::int64_t i, std::int64_t j, std::int64_t b, std::int8_t* out) override;
  PoolParams p_;
};

// A conv stage: LineBuffer + MacArray (or OuterProductArray), with its
// weight memory as a TLM-2.0 target: weights are written over b_transport
// before inference (the byte address is the index into the weight array;
// one memory word, multipliers × 8 bits, per cycle).
class Stage : public sc_core::sc_module {
 public:
  Stage(sc_core::sc_module_name name, const WindowShape& in, StageParams params, std::int64_t frames, SimContext& ctx);
  tlm_utils::simple_target_socket<Stage> weights_socket;

  LineBuffer& line_buffer() { return *lb_; }
  WindowCompute& compute() { return *mac_; }
  const StageParams& params() const { return params_; }
  std::int64_t weight_bytes() const;

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  StageParams params_;
  std::unique_ptr<LineBuffer> lb_;
  std::unique_ptr<WindowCompute> mac_;
  SimContext& ctx_;
};

// Max / average pooling: LineBuffer + PoolUnit.
class Pool : public sc_core::sc_module {
 public:
  Pool(sc_core::sc_module_name name, const WindowShape& in, const PoolParams& params, std::int64_t frames,
       SimContext& ctx);
  LineBuffer& line_buffer() { return lb_; }
  WindowCompute& compute() { return unit_; }

 private:
  LineBuffer lb_;
  PoolUnit unit_;
};

}  // namespace mixtd::sc
