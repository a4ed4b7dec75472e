// C-SIMULATION SHIM for Xilinx's <hls_stream.h>: hls::stream<T> as an unbounded
// FIFO. For C simulation only: a Vitis build compiles against Vitis HLS's own
// header, so hls/shim must never be on its include path.
//
// Like Vitis's C simulation, a DATAFLOW region runs its processes one after the
// other, so a stream must hold everything its producer writes (no depth, never
// full). Reading an empty stream throws std::runtime_error naming the stream:
// in hardware that read would wait forever, and a test should fail, not hang.
#ifndef MIXTD_HLS_SHIM_HLS_STREAM_H
#define MIXTD_HLS_SHIM_HLS_STREAM_H

#include <cstddef>
#include <deque>
#include <stdexcept>
#include <string>

namespace hls {

template <typename T>
class stream {
 public:
  stream() : name_("hls::stream") {}
  explicit stream(const char* name) : name_(name) {}
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  T read() {
    if (q_.empty()) throw std::runtime_error("hls::stream '" + name_ + "' read while empty (in hardware: a hang)");
    T v = q_.front();
    q_.pop_front();
    return v;
  }
  void read(T& v) { v = read(); }
  bool read_nb(T& v) {
    if (q_.empty()) return false;
    v = read();
    return true;
  }
  void write(const T& v) { q_.push_back(v); }
  bool write_nb(const T& v) {
    write(v);
    return true;
  }
  void operator>>(T& v) { read(v); }
  void operator<<(const T& v) { write(v); }

  bool empty() const { return q_.empty(); }
  bool full() const { return false; }
  std::size_t size() const { return q_.size(); }

 private:
  std::string name_;
  std::deque<T> q_;
};

}  // namespace hls

#endif  // MIXTD_HLS_SHIM_HLS_STREAM_H
