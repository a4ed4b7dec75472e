#include "mixtd/td/Factors.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <tuple>

#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::td {

namespace {

// Values go to and from the file as they lie in memory.
static_assert(std::endian::native == std::endian::little, "the factors file is little-endian");

constexpr char kMagic[8] = {'M', 'I', 'X', 'T', 'D', 'F', 'A', 'C'};
// Bounds of every channel count and spatial size, and of every kernel size,
// stride and padding: far above any real layer, low enough that a stage's
// weight count (out·in·kh·kw) cannot overflow.
constexpr std::int64_t kMaxDim = std::int64_t{1} << 20, kMaxKernel = 256;
constexpr std::uint32_t kMaxName = 4096, kMaxRole = 16, kMaxStages = 4;
// Bytes of a layer with one-byte name, no stage and no chunk: bounds the layer count.
constexpr std::size_t kMinLayerBytes = 4 + 1 + 25 + 37 + 4 + 8;

std::uint32_t crc_of(const char* p, std::size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t done = 0; done < n;) {  // zlib takes 32-bit lengths
    const auto step = static_cast<uInt>(std::min<std::size_t>(n - done, std::size_t{1} << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(p + done), step);
    done += step;
  }
  return static_cast<std::uint32_t>(crc);
}

std::int64_t stages_of(TdType t) { return t == TdType::None ? 1 : t == TdType::Cpd ? 4 : 2; }

// "'FILE': layer 'NAME': " — the start of every message about a layer.
std::string where(const std::string& file, const std::string& layer) {
  return "'" + file + "': layer '" + layer + "': ";
}

// Names go into messages, which are one line each.
void check_printable(const std::string& what, const std::string& s) {
  const auto bad = std::find_if(s.begin(), s.end(), [](char ch) { return ch >= 0 && ch < 0x20; });
  if (bad != s.end())
    throw Error(what + " has control character " + std::to_string(int(*bad)) + " at " +
                std::to_string(bad - s.begin()) + ": legal printable characters only");
}

// Messages are built only on failure: these run for every value read.
void in_range(const std::string& at, const std::string& what, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi)
    throw Error(at + what + " = " + std::to_string(v) + ": legal " + std::to_string(lo) + " .. " + std::to_string(hi));
}

void check_stage(const std::string& at, const StageShape& s) {
  in_range(at, "role length", static_cast<std::int64_t>(s.role.size()), 1, kMaxRole);
  check_printable(at + "role", s.role);
  for (const auto& [what, v, lo, hi] : {std::tuple{"in_ch", s.in_ch, 1, kMaxDim},
                                        {"out_ch", s.out_ch, 1, kMaxDim},
                                        {"kh", s.kh, 1, kMaxKernel},
                                        {"kw", s.kw, 1, kMaxKernel},
                                        {"sh", s.sh, 1, kMaxKernel},
                                        {"sw", s.sw, 1, kMaxKernel},
                                        {"ph", s.ph, 0, kMaxKernel},
                                        {"pw", s.pw, 0, kMaxKernel},
                                        {"input c", s.in.c, 0, kMaxDim},
                                        {"input h", s.in.h, 0, kMaxDim},
                                        {"input w", s.in.w, 0, kMaxDim},
                                        {"output c", s.out.c, 0, kMaxDim},
                                        {"output h", s.out.h, 0, kMaxDim},
                                        {"output w", s.out.w, 0, kMaxDim}})
    in_range(at, what, v, lo, hi);
  in_range(at, "groups", s.groups, 1, s.in_ch);
  require(s.in_ch % s.groups == 0,
          at + "groups = " + std::to_string(s.groups) + ": legal a divisor of in_ch " + std::to_string(s.in_ch));
  require(!s.depthwise || (s.groups == s.in_ch && s.in_ch == s.out_ch),
          at + "depthwise with groups " + std::to_string(s.groups) + ", in_ch " + std::to_string(s.in_ch) +
              ", out_ch " + std::to_string(s.out_ch) + ": legal only with groups = in_ch = out_ch");
}

// τ and the stage shapes: every value in range and the sizes agreeing, so
// that the chunks can be read (and later used) without overflow.
void check_geometry(const std::string& at, const LayerGeometry& g) {
  in_range(at, "n", g.n, 1, kMaxDim);
  in_range(at, "c", g.c, 1, kMaxDim);
  in_range(at, "g1", g.tau.g1, 1, g.n);
  in_range(at, "g2", g.tau.g2, 1, g.c);
  in_range(at, "rank", g.tau.rank, 0, kMaxDim);
  require(g.n % g.tau.g1 == 0,
          at + "g1 = " + std::to_string(g.tau.g1) + ": legal a divisor of n " + std::to_string(g.n));
  require(g.c % g.tau.g2 == 0,
          at + "g2 = " + std::to_string(g.tau.g2) + ": legal a divisor of c " + std::to_string(g.c));
  in_range(at, "chunk_out", g.chunk_out, g.n / g.tau.g1, g.n / g.tau.g1);
  in_range(at, "chunk_in", g.chunk_in, g.c / g.tau.g2, g.c / g.tau.g2);
  const std::int64_t stages = stages_of(g.tau.type);
  in_range(at, "stage count of " + std::string(to_string(g.tau.type)), static_cast<std::int64_t>(g.stages.size()),
           stages, stages);
  for (std::size_t k = 0; k < g.stages.size(); ++k) check_stage(at + "stage " + std::to_string(k) + ": ", g.stages[k]);
}

void check_finite(const std::string& at, const std::vector<float>& v) {
  for (std::size_t k = 0; k < v.size(); ++k)
    if (!std::isfinite(v[k]))
      throw Error(at + "value at flat index " + std::to_string(k) + " is " + std::to_string(v[k]) +
                  ": legal finite values only");
}

// Everything load_factors promises of a layer (and save_factors demands).
void check_layer(const std::string& at, const DecomposedLayer& d) {
  const LayerGeometry& g = d.geometry;
  check_geometry(at, g);
  in_range(at, "chunk count", static_cast<std::int64_t>(d.chunks.size()), g.chunks(), g.chunks());
  for (std::size_t i = 0; i < d.chunks.size(); ++i) {
    const ChunkFactors& ch = d.chunks[i];
    const std::string who = at + "chunk " + std::to_string(i) + ": ";
    const auto index = static_cast<std::int64_t>(i);
    in_range(who, "a", ch.a, index / g.tau.g2, index / g.tau.g2);
    in_range(who, "b", ch.b, index % g.tau.g2, index % g.tau.g2);
    in_range(who, "stage count", static_cast<std::int64_t>(ch.stages.size()),
             static_cast<std::int64_t>(g.stages.size()), static_cast<std::int64_t>(g.stages.size()));
    for (std::size_t k = 0; k < ch.stages.size(); ++k) {
      const std::string st = who + "stage " + std::to_string(k) + ": ";
      require(ch.stages[k].shape == g.stages[k], st + "shaped unlike the layer's stage " + std::to_string(k));
      const std::int64_t want = g.stages[k].weight_count();
      in_range(st, "weight count", static_cast<std::int64_t>(ch.stages[k].weight.size()), want, want);
      check_finite(st, ch.stages[k].weight);
    }
  }
  const auto nb = static_cast<std::int64_t>(d.bias.size());
  require(nb == 0 || nb == g.n, at + "bias count = " + std::to_string(nb) + ": legal 0 or n = " + std::to_string(g.n));
  check_finite(at + "bias: ", d.bias);
}

class Writer {
 public:
  std::string out = std::string(kMagic, sizeof kMagic);

  template <typename T>
  void put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
  }
  void text(const std::string& s) {
    put<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    out += s;
  }
  void floats(const std::vector<float>& v) {
    put<std::uint64_t>(v.size());
    if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  void shape(const net::Shape& s) {
    for (const std::int64_t v : {s.c, s.h, s.w}) put<std::int64_t>(v);
  }
  void layer(const std::string& name, const DecomposedLayer& d);
};

void Writer::layer(const std::string& name, const DecomposedLayer& d) {
  const LayerGeometry& g = d.geometry;
  text(name);
  put<std::uint8_t>(static_cast<std::uint8_t>(g.tau.type));
  for (const std::int64_t v : {g.tau.g1, g.tau.g2, g.tau.rank, g.n, g.c, g.chunk_out, g.chunk_in}) put<std::int64_t>(v);
  put<std::uint8_t>(g.bias ? 1 : 0);
  put<std::uint32_t>(static_cast<std::uint32_t>(g.stages.size()));
  for (const StageShape& s : g.stages) {
    text(s.role);
    for (const std::int64_t v : {s.in_ch, s.out_ch, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.groups}) put<std::int64_t>(v);
    put<std::uint8_t>(s.depthwise ? 1 : 0);
    shape(s.in);
    shape(s.out);
  }
  put<std::uint32_t>(static_cast<std::uint32_t>(d.chunks.size()));
  for (const ChunkFactors& ch : d.chunks) {
    put<std::int64_t>(ch.a);
    put<std::int64_t>(ch.b);
    for (const StageWeights& st : ch.stages) floats(st.weight);
  }
  floats(d.bias);
}

// Reads values off the file's body (all but its CRC), each read bounded by
// the bytes left; `at` starts every message ("'FILE': " or "'FILE': layer 'X': ").
class Reader {
 public:
  Reader(const std::string& data, std::size_t end, std::string file)
      : data_(data), end_(end), file_(std::move(file)), at(where_file()) {}

  std::string where_file() const { return "'" + file_ + "': "; }
  void enter(const std::string& layer) { at = where(file_, layer); }
  std::size_t left() const { return end_ - pos_; }
  bool done() const { return pos_ == end_; }

  void need(std::uint64_t bytes, const std::string& what) const {
    if (bytes > left())
      throw Error(at + "truncated: " + what + " needs " + std::to_string(bytes) + " bytes at byte " +
                  std::to_string(pos_) + ", only " + std::to_string(left()) + " remain");
  }
  template <typename T>
  T get(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  // A count that `each` bytes per item must fit in what is left, and at most `most`.
  std::uint64_t count(const std::string& what, std::uint64_t v, std::uint64_t each, std::uint64_t most) const {
    const std::uint64_t fit = std::min<std::uint64_t>(most, left() / each);
    require(v <= fit, at + what + " = " + std::to_string(v) + ": legal at most " + std::to_string(fit) + " (" +
                          std::to_string(left()) + " bytes remain, " + std::to_string(each) + " or more each)");
    return v;
  }
  std::string text(const std::string& what, std::uint32_t most) {
    const auto n = get<std::uint32_t>(what + " length");
    require(n >= 1, at + what + " length = 0: legal 1 .. " + std::to_string(most));
    count(what + " length", n, 1, most);
    std::string s = data_.substr(pos_, n);
    check_printable(at + what, s);
    pos_ += n;
    return s;
  }
  bool flag(const std::string& what) {
    const auto v = get<std::uint8_t>(what);
    require(v <= 1, at + what + " = " + std::to_string(v) + ": legal 0 or 1");
    return v == 1;
  }
  // A float vector of exactly `want` values (its stored count checked first).
  std::vector<float> floats(const std::string& what, std::uint64_t want_lo, std::uint64_t want_hi) {
    const auto n = get<std::uint64_t>(what + " count");
    require(n == want_lo || n == want_hi, at + what + " count = " + std::to_string(n) + ": legal " +
                                              std::to_string(want_lo) +
                                              (want_hi != want_lo ? " or " + std::to_string(want_hi) : std::string()));
    need(n * sizeof(float), what);
    std::vector<float> v(static_cast<std::size_t>(n));
    if (n > 0) std::memcpy(v.data(), data_.data() + pos_, v.size() * sizeof(float));  // no null pointer to memcpy
    pos_ += v.size() * sizeof(float);
    return v;
  }
  net::Shape shape(const std::string& what) {
    net::Shape s;
    s.c = get<std::int64_t>(what + " c");
    s.h = get<std::int64_t>(what + " h");
    s.w = get<std::int64_t>(what + " w");
    return s;
  }

 private:
  const std::string& data_;
  std::size_t end_, pos_ = sizeof kMagic;
  std::string file_;

 public:
  std::string at;
};

Tau read_tau(Reader& r) {
  Tau t;
  const auto type = r.get<std::uint8_t>("tau type");
  require(type <= 3,
          r.at + "tau type = " + std::to_string(type) + ": legal 0 .. 3 (" + std::string(kTdTypeNames) + ")");
  t.type = static_cast<TdType>(type);
  t.g1 = r.get<std::int64_t>("g1");
  t.g2 = r.get<std::int64_t>("g2");
  t.rank = r.get<std::int64_t>("rank");
  return t;
}

StageShape read_stage(Reader& r) {
  StageShape s;
  s.role = r.text("stage role", kMaxRole);
  for (std::int64_t* v : {&s.in_ch, &s.out_ch, &s.kh, &s.kw, &s.sh, &s.sw, &s.ph, &s.pw, &s.groups})
    *v = r.get<std::int64_t>("stage shape");
  s.depthwise = r.flag("depthwise");
  s.in = r.shape("stage input");
  s.out = r.shape("stage output");
  return s;
}

LayerGeometry read_geometry(Reader& r) {
  LayerGeometry g;
  g.tau = read_tau(r);
  for (std::int64_t* v : {&g.n, &g.c, &g.chunk_out, &g.chunk_in}) *v = r.get<std::int64_t>("geometry");
  g.bias = r.flag("bias flag");
  const auto stages = r.get<std::uint32_t>("stage count");
  r.count("stage count", stages, 4 + 1 + 9 * 8 + 1 + 6 * 8, kMaxStages);
  for (std::uint32_t k = 0; k < stages; ++k) g.stages.push_back(read_stage(r));
  check_geometry(r.at, g);  // before any size below is trusted
  return g;
}

DecomposedLayer read_layer(Reader& r) {
  DecomposedLayer d;
  d.geometry = read_geometry(r);
  const LayerGeometry& g = d.geometry;
  const auto chunks = r.get<std::uint32_t>("chunk count");
  in_range(r.at, "chunk count", chunks, g.chunks(), g.chunks());
  r.count("chunk count", chunks, 16 + 8 * g.stages.size(), chunks);
  for (std::uint32_t i = 0; i < chunks; ++i) {
    ChunkFactors ch;
    ch.a = r.get<std::int64_t>("chunk a");
    ch.b = r.get<std::int64_t>("chunk b");
    for (std::size_t k = 0; k < g.stages.size(); ++k) {
      const auto want = static_cast<std::uint64_t>(g.stages[k].weight_count());
      ch.stages.push_back(
          {g.stages[k],
           r.floats("chunk " + std::to_string(i) + " stage " + std::to_string(k) + " weight", want, want)});
    }
    d.chunks.push_back(std::move(ch));
  }
  d.bias = r.floats("bias", 0, static_cast<std::uint64_t>(g.n));
  check_layer(r.at, d);
  return d;
}

// A tensor key is a layer name with at most a "#stage<k>" or "#partial" tail.
void check_exponent(const std::string& at, const std::string& key, std::int64_t e) {
  require(!key.empty() && key.size() <= kMaxName + 16, at + "exponent key of " + std::to_string(key.size()) +
                                                           " characters: legal 1 .. " + std::to_string(kMaxName + 16));
  check_printable(at + "exponent key", key);
  in_range(at + "tensor '" + key + "': ", "exponent", e, -kMaxExponentMagnitude, kMaxExponentMagnitude);
}

ActivationExponents read_exponents(Reader& r) {
  const auto n = r.get<std::uint32_t>("exponent count");
  r.count("exponent count", n, 4 + 1 + 4, n);
  ActivationExponents out;
  for (std::uint32_t i = 0; i < n; ++i) {
    r.at = r.where_file() + "exponent " + std::to_string(i) + ": ";
    const std::string key = r.text("tensor key", kMaxName + 16);
    const auto e = r.get<std::int32_t>("exponent");
    check_exponent(r.at, key, e);
    require(!out.count(key), r.at + "tensor '" + key + "' appears twice: legal once");
    out[key] = e;
  }
  r.at = r.where_file();
  return out;
}

}  // namespace

void save_factors(const std::filesystem::path& path, const FactorsMap& layers, const ActivationExponents& exponents) {
  const std::string file = path.string();
  Writer w;
  w.put<std::uint32_t>(kFactorsVersion);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(layers.size()));
  for (const auto& [name, d] : layers) {
    require(!name.empty() && name.size() <= kMaxName, where(file, name) + "name of " + std::to_string(name.size()) +
                                                          " characters: legal 1 .. " + std::to_string(kMaxName));
    check_printable("'" + file + "': a layer name", name);
    check_layer(where(file, name), d);
    w.layer(name, d);
  }
  w.put<std::uint32_t>(static_cast<std::uint32_t>(exponents.size()));
  for (const auto& [key, e] : exponents) {
    check_exponent("'" + file + "': ", key, e);
    w.text(key);
    w.put<std::int32_t>(e);
  }
  w.put<std::uint32_t>(crc_of(w.out.data(), w.out.size()));
  write_file_atomic(path, w.out);
}

FactorsMap load_factors(const std::filesystem::path& path, ActivationExponents* exponents) {
  const std::string file = path.string();
  const std::string data = read_file(path);
  require(data.size() >= sizeof kMagic + 12 && std::memcmp(data.data(), kMagic, sizeof kMagic) == 0,
          "'" + file +
              "': not a mixtd factors file (no 'MIXTDFAC' magic at its start; one written by `mixtd finetune " +
              "--factors` is)");
  const std::size_t body = data.size() - 4;
  Reader r(data, body, file);
  const auto version = r.get<std::uint32_t>("version");
  require(version == 1 || version == kFactorsVersion,
          "'" + file + "': factors file version " + std::to_string(version) + ": this mixtd reads versions 1 .. " +
              std::to_string(kFactorsVersion));
  const auto layers = r.get<std::uint32_t>("layer count");
  r.count("layer count", layers, kMinLayerBytes, layers);
  FactorsMap out;
  for (std::uint32_t i = 0; i < layers; ++i) {
    r.at = r.where_file() + "layer " + std::to_string(i) + ": ";
    const std::string name = r.text("layer name", kMaxName);
    r.enter(name);
    require(!out.count(name), r.at + "appears twice: legal once");
    out[name] = read_layer(r);
  }
  r.at = r.where_file();
  ActivationExponents exps;
  if (version >= 2) exps = read_exponents(r);
  require(r.done(), r.at + std::to_string(r.left()) + " trailing bytes after " +
                        (version >= 2 ? "the exponents" : "the last layer") + ": legal none");
  std::uint32_t stored;
  std::memcpy(&stored, data.data() + body, 4);
  require(stored == crc_of(data.data(), body),
          r.at + "CRC-32 mismatch: the file is corrupt (its structure reads, its values differ from those written)");
  if (exponents) *exponents = std::move(exps);
  return out;
}

}  // namespace mixtd::td
