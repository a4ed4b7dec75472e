#include "mixtd/sc/BeatFifo.h"

#include <algorithm>
#include <cstring>
#include <systemc>

#include "mixtd/support/Error.h"

namespace mixtd::sc {

// Plain variables, not signals: both ends update them (the producer on
// push, the consumer on pop, possibly in one delta cycle), and the trace
// file samples them at the end of every time step.
// A beat pushed and popped in one time step leaves the occupancy as it
// was; the running counts of beats in and out show every handshake.
struct BeatFifo::Trace {
  int occupancy = 0;
  bool valid = false, ready = true;
  unsigned pushed = 0, popped = 0;
};

BeatFifo::BeatFifo(std::string name, std::int64_t depth, std::int64_t width, SimContext& ctx)
    : name_(std::move(name)), depth_(depth), width_(width), ctx_(ctx) {
  require(depth >= 1, "stream '" + name_ + "': FIFO depth must be at least 1 beat, got " + std::to_string(depth));
  require(width >= 1, "stream '" + name_ + "': width must be at least 1 word, got " + std::to_string(width));
  push_time_.assign(static_cast<std::size_t>(depth), 0);
  pop_time_.assign(static_cast<std::size_t>(depth), -1);
  if (ctx_.data) data_.assign(static_cast<std::size_t>(depth * width), 0);
}

BeatFifo::~BeatFifo() = default;

Cycle BeatFifo::wait_slot() {
  while (tail_ - head_ >= depth_) {
    writer_waiting_ = true;
    sc_core::wait(popped_);
  }
  writer_waiting_ = false;
  return tail_ >= depth_ ? pop_time_[slot(tail_)] + 1 : 0;
}

void BeatFifo::push(Cycle t, const std::int8_t* words) {
  ctx_.sync(t);
  const std::size_t s = slot(tail_);
  push_time_[s] = t;
  if (!data_.empty() && words)
    std::memcpy(&data_[s * static_cast<std::size_t>(width_)], words, static_cast<std::size_t>(width_));
  if (record) {
    recorded_at.push_back(t);
    if (words) recorded.insert(recorded.end(), words, words + width_);
  }
  ++tail_;
  if (trace_) update_trace();
  if (reader_waiting_) pushed_.notify();
}

void BeatFifo::wait_beats(std::int64_t n) {
  require(n <= depth_, "stream '" + name_ + "': a consumer needs " + std::to_string(n) +
                           " beats at once but the FIFO holds " + std::to_string(depth_));
  while (tail_ - head_ < n) {
    reader_waiting_ = true;
    sc_core::wait(pushed_);
  }
  reader_waiting_ = false;
}

const std::int8_t* BeatFifo::data_at(std::int64_t i) const {
  return data_.empty() ? nullptr : &data_[slot(head_ + i) * static_cast<std::size_t>(width_)];
}

void BeatFifo::pop(Cycle t) {
  ctx_.sync(t);
  // Occupancy at the end of cycle p (a push's cycle) = pushes up to p − pops
  // up to p. Pushes and pops are each in cycle order, so a push's figure is
  // known at the first pop after its cycle, or at its own pop.
  while (first_pending_ < tail_ && push_time_[slot(first_pending_)] < t) {
    high_water_ = std::max(high_water_, occupancy_at_push(first_pending_));
    ++first_pending_;
  }
  pop_time_[slot(head_)] = t;
  ++head_;
  if (first_pending_ < head_) first_pending_ = head_;  // popped in its own cycle: never counted as waiting
  if (trace_) update_trace();
  if (writer_waiting_) popped_.notify();
}

std::int64_t BeatFifo::occupancy_at_push(std::int64_t k) const {
  // The pops done so far at cycles after push k's do not count: a
  // consumer's thread can run ahead of its producer's in the simulator's
  // order (a slow consumer is ahead in time), popping at later cycles
  // before this push was made. Only pops after the one that freed k's slot
  // (index k − depth) can be later than k's push (it waited for that pop),
  // so they are all still in pop_time_ (a pop of index ≤ k resolves k: none
  // overwrote them yet); pops are in cycle order, so the first later one is
  // found by bisection (a 4,096-deep FIFO behind a slow consumer has
  // thousands of them).
  const Cycle p = push_time_[slot(k)];
  std::int64_t lo = std::max<std::int64_t>(0, k - depth_ + 1), hi = head_;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (pop_time_[slot(mid)] > p) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return k + 1 - lo;  // pushes up to k, less the pops up to cycle p
}

std::int64_t BeatFifo::high_water() const {
  // Pushes no later pop has resolved yet: every pop up to their cycles has
  // happened by the end of a run.
  std::int64_t h = high_water_;
  for (std::int64_t k = std::max(first_pending_, head_); k < tail_; ++k) h = std::max(h, occupancy_at_push(k));
  return h;
}

void BeatFifo::trace(sc_core::sc_trace_file* tf) {
  trace_ = std::make_unique<Trace>();
  sc_core::sc_trace(tf, trace_->occupancy, name_ + ".occupancy");
  sc_core::sc_trace(tf, trace_->valid, name_ + ".valid");
  sc_core::sc_trace(tf, trace_->ready, name_ + ".ready");
  sc_core::sc_trace(tf, trace_->pushed, name_ + ".pushed");
  sc_core::sc_trace(tf, trace_->popped, name_ + ".popped");
  update_trace();
}

void BeatFifo::update_trace() {
  const auto n = static_cast<int>(tail_ - head_);
  trace_->occupancy = n;
  trace_->valid = n > 0;
  trace_->ready = n < depth_;
  trace_->pushed = static_cast<unsigned>(tail_);
  trace_->popped = static_cast<unsigned>(head_);
}

Cycle InPort::read(Cycle earliest, std::int8_t* out) {
  // A gearbox: producer beats that are used up before this beat is complete
  // are popped into its register as they arrive (one per cycle); the beat
  // that completes it is popped together with it.
  const std::int64_t fw = fifo_->width();
  const Cycle base = std::max(earliest, last_ + 1);
  Cycle ready = -1;
  std::int64_t need = width_;
  bool pop_last = false;
  while (need > 0) {
    if (fifo_->size() < 1) fifo_->wait_beats(1);
    const Cycle arrival = fifo_->time_at(0);
    const std::int64_t take = std::min(need, fw - offset_);
    if (out) {
      const std::int8_t* src = fifo_->data_at(0);
      if (src) std::memcpy(out + (width_ - need), src + offset_, static_cast<std::size_t>(take));
    }
    need -= take;
    offset_ += take;
    if (offset_ == fw && need > 0) {  // absorbed: pop now
      const Cycle p = std::max({arrival, last_pop_ + 1, last_});
      fifo_->pop(p);
      last_pop_ = p;
      ready = std::max(ready, p);
      offset_ = 0;
    } else {
      ready = std::max(ready, arrival);
      pop_last = offset_ == fw;
    }
  }
  const Cycle t = std::max(base, ready);
  if (stats_) {
    if (ready > base && last_ >= 0) stats_->stall(stats_->stall_in, base, ready);
    stats_->active(t);
  }
  if (pop_last) {
    fifo_->pop(t);
    last_pop_ = t;
    offset_ = 0;
  }
  last_ = t;
  return t;
}

Cycle OutPort::write(Cycle ready, const std::int8_t* words) {
  const Cycle base = std::max(ready, last_ + 1);
  Cycle t = base;
  for (BeatFifo* f : fifos_) t = std::max(t, f->wait_slot());
  if (stats_) {
    stats_->stall(stats_->stall_out, base, t);
    stats_->active(t);
  }
  for (BeatFifo* f : fifos_) f->push(t, words);
  last_ = t;
  return t;
}

}  // namespace mixtd::sc
