// C-SIMULATION SHIM for Xilinx's <ap_int.h>: ap_uint<N> (1 <= N <= 1024), only
// the subset that hls/movers and tests/hls use. For C simulation only: a Vitis
// build compiles against Vitis HLS's own header, so hls/shim must never be on
// its include path.
//
// The semantics are the real type's where this one defines them: values wrap
// modulo 2^N, shifts keep the left operand's width, bitwise operators of two
// ap_uint<N> give an ap_uint<N>, x[i] and x.range(hi, lo) / x(hi, lo) are
// writable views. Differences, all of them things the movers must not rely on:
// shifts are only by non-negative amounts (the real type shifts the other way
// for negative ones), and give 0 at or beyond N (the movers never shift that
// far: the real type does not promise it); range() needs hi >= lo (the real
// one reverses the bits);
// mixed-width bitwise operators and arithmetic are absent; conversion to a C
// integer is explicit (to_uint64(), to_uint(), bool), not implicit. A bit
// index or range outside the value throws std::out_of_range.
#ifndef MIXTD_HLS_SHIM_AP_INT_H
#define MIXTD_HLS_SHIM_AP_INT_H

#include <cstdint>
#include <stdexcept>
#include <type_traits>

template <int N>
class ap_uint;

namespace ap_shim {

// Always on, NDEBUG or not: an index out of range is a bug in the code under
// simulation, which a Release-built test must report too.
inline void require(bool ok, const char* what) {
  if (!ok) throw std::out_of_range(what);
}

// x.range(hi, lo): reads and writes bits [hi, lo] of the referenced value.
template <int N>
class range_ref {
 public:
  range_ref(ap_uint<N>* v, int hi, int lo) : v_(v), hi_(hi), lo_(lo) {
    require(0 <= lo && lo <= hi && hi < N, "ap_uint::range(hi, lo): needs 0 <= lo <= hi < N");
  }
  ap_uint<N> get() const { return (*v_ >> lo_) & mask(); }
  std::uint64_t to_uint64() const { return get().to_uint64(); }
  unsigned to_uint() const { return get().to_uint(); }
  range_ref& operator=(const ap_uint<N>& value) {
    *v_ = (*v_ & ~(mask() << lo_)) | ((value & mask()) << lo_);
    return *this;
  }
  range_ref(const range_ref&) = default;
  // Assigning one view to another copies bits, as the real type does.
  range_ref& operator=(const range_ref& other) { return *this = other.get(); }

 private:
  ap_uint<N> mask() const { return ~ap_uint<N>(0) >> (N - 1 - (hi_ - lo_)); }
  ap_uint<N>* v_;
  int hi_;
  int lo_;
};

// x[i] on a non-const value.
template <int N>
class bit_ref {
 public:
  bit_ref(ap_uint<N>* v, int i) : v_(v), i_(i) {}
  bit_ref(const bit_ref&) = default;
  operator bool() const { return v_->get_bit(i_); }
  bit_ref& operator=(bool b) {
    v_->set_bit(i_, b);
    return *this;
  }
  bit_ref& operator=(const bit_ref& other) { return *this = static_cast<bool>(other); }

 private:
  ap_uint<N>* v_;
  int i_;
};

}  // namespace ap_shim

template <int N>
class ap_uint {
  static_assert(1 <= N && N <= 1024, "ap_uint<N>: 1 <= N <= 1024 (the real header's default AP_INT_MAX_W)");
  template <int M>
  friend class ap_uint;
  static constexpr int kWords = (N + 63) / 64;

 public:
  ap_uint() : w_() {}
  // Implicit from any C integer, as the real type: a negative value is
  // sign-extended before wrapping, so ap_uint<N>(-1) is all ones.
  template <class T, class = typename std::enable_if<std::is_integral<T>::value>::type>
  ap_uint(T v) : w_() {  // NOLINT(google-explicit-constructor)
    const bool negative = std::is_signed<T>::value && static_cast<long long>(v) < 0;
    w_[0] = static_cast<std::uint64_t>(v);
    for (int i = 1; i < kWords; ++i) w_[i] = negative ? ~std::uint64_t{0} : 0;
    clip();
  }
  // From another width: truncates or zero-extends.
  template <int M>
  ap_uint(const ap_uint<M>& o) : w_() {  // NOLINT(google-explicit-constructor)
    for (int i = 0; i < kWords && i < ap_uint<M>::kWords; ++i) w_[i] = o.w_[i];
    clip();
  }
  template <int M>
  ap_uint(const ap_shim::range_ref<M>& r) : ap_uint(r.get()) {}  // NOLINT(google-explicit-constructor)

  std::uint64_t to_uint64() const { return w_[0]; }
  unsigned to_uint() const { return static_cast<unsigned>(w_[0]); }
  explicit operator bool() const {
    for (int i = 0; i < kWords; ++i)
      if (w_[i] != 0) return true;
    return false;
  }

  bool get_bit(int i) const {
    ap_shim::require(0 <= i && i < N, "ap_uint bit index out of range");
    return (w_[i / 64] >> (i % 64)) & 1;
  }
  void set_bit(int i, bool b) {
    ap_shim::require(0 <= i && i < N, "ap_uint bit index out of range");
    const std::uint64_t m = std::uint64_t{1} << (i % 64);
    w_[i / 64] = b ? (w_[i / 64] | m) : (w_[i / 64] & ~m);
  }
  ap_shim::bit_ref<N> operator[](int i) { return ap_shim::bit_ref<N>(this, i); }
  bool operator[](int i) const { return get_bit(i); }
  ap_shim::range_ref<N> range(int hi, int lo) { return ap_shim::range_ref<N>(this, hi, lo); }
  // As in the real header, a const value still gives a (writable) view.
  ap_shim::range_ref<N> range(int hi, int lo) const { return const_cast<ap_uint*>(this)->range(hi, lo); }
  ap_shim::range_ref<N> operator()(int hi, int lo) { return range(hi, lo); }
  ap_shim::range_ref<N> operator()(int hi, int lo) const { return range(hi, lo); }

  ap_uint operator~() const {
    ap_uint r;
    for (int i = 0; i < kWords; ++i) r.w_[i] = ~w_[i];
    r.clip();
    return r;
  }
  ap_uint& operator&=(const ap_uint& o) {
    for (int i = 0; i < kWords; ++i) w_[i] &= o.w_[i];
    return *this;
  }
  ap_uint& operator|=(const ap_uint& o) {
    for (int i = 0; i < kWords; ++i) w_[i] |= o.w_[i];
    return *this;
  }
  ap_uint& operator^=(const ap_uint& o) {
    for (int i = 0; i < kWords; ++i) w_[i] ^= o.w_[i];
    return *this;
  }
  friend ap_uint operator&(ap_uint a, const ap_uint& b) { return a &= b; }
  friend ap_uint operator|(ap_uint a, const ap_uint& b) { return a |= b; }
  friend ap_uint operator^(ap_uint a, const ap_uint& b) { return a ^= b; }
  friend bool operator==(const ap_uint& a, const ap_uint& b) {
    for (int i = 0; i < kWords; ++i)
      if (a.w_[i] != b.w_[i]) return false;
    return true;
  }
  friend bool operator!=(const ap_uint& a, const ap_uint& b) { return !(a == b); }

  template <class T, class = typename std::enable_if<std::is_integral<T>::value>::type>
  ap_uint operator<<(T s) const {
    return shl(static_cast<unsigned long long>(s));
  }
  template <class T, class = typename std::enable_if<std::is_integral<T>::value>::type>
  ap_uint operator>>(T s) const {
    return shr(static_cast<unsigned long long>(s));
  }
  template <class T>
  ap_uint& operator<<=(T s) {
    return *this = *this << s;
  }
  template <class T>
  ap_uint& operator>>=(T s) {
    return *this = *this >> s;
  }

 private:
  ap_uint shl(unsigned long long s) const {
    ap_uint r;
    if (s >= static_cast<unsigned long long>(N)) return r;
    const int ws = static_cast<int>(s / 64), bs = static_cast<int>(s % 64);
    for (int i = kWords - 1; i >= ws; --i) {
      r.w_[i] = w_[i - ws] << bs;
      if (bs != 0 && i - ws - 1 >= 0) r.w_[i] |= w_[i - ws - 1] >> (64 - bs);
    }
    r.clip();
    return r;
  }
  ap_uint shr(unsigned long long s) const {
    ap_uint r;
    if (s >= static_cast<unsigned long long>(N)) return r;
    const int ws = static_cast<int>(s / 64), bs = static_cast<int>(s % 64);
    for (int i = 0; i + ws < kWords; ++i) {
      r.w_[i] = w_[i + ws] >> bs;
      if (bs != 0 && i + ws + 1 < kWords) r.w_[i] |= w_[i + ws + 1] << (64 - bs);
    }
    return r;
  }
  // Bits above N in the top word stay zero, which shr and == rely on.
  void clip() {
    if (N % 64 != 0) w_[kWords - 1] &= (std::uint64_t{1} << (N % 64)) - 1;
  }

  std::uint64_t w_[kWords];
};

#endif  // MIXTD_HLS_SHIM_AP_INT_H
