#include "mixtd/net/WeightsFile.h"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <map>

#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::net {

namespace {

constexpr char kMagic[8] = {'M', 'I', 'X', 'T', 'D', 'W', '1', '\n'};

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

struct Reader {
  const std::string& data;
  std::size_t pos = 0;
  const std::string& file;

  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  void need(std::size_t n, const char* what) const {
    require(pos + n <= data.size(), "'" + file + "': truncated weights file (while reading " + what + " at byte " +
                                        std::to_string(pos) + " of " + std::to_string(data.size()) + ")");
  }
};

// The tensors of one layer, in file order.
std::vector<std::pair<std::string, std::vector<float>*>> tensors_of(Layer& l) {
  std::vector<std::pair<std::string, std::vector<float>*>> t;
  if (!l.weight.empty()) t.emplace_back(l.name + ".weight", &l.weight);
  if (!l.bias.empty()) t.emplace_back(l.name + ".bias", &l.bias);
  if (!l.mean.empty()) t.emplace_back(l.name + ".mean", &l.mean);
  if (!l.var.empty()) t.emplace_back(l.name + ".var", &l.var);
  return t;
}

}  // namespace

void save_weights(const Network& net, const std::filesystem::path& path) {
  Network copy_names = net;  // tensors_of wants mutable access; data not modified
  std::string out(kMagic, sizeof kMagic);
  std::uint32_t count = 0;
  for (auto& l : copy_names.layers) count += static_cast<std::uint32_t>(tensors_of(l).size());
  put<std::uint32_t>(out, count);
  for (auto& l : copy_names.layers) {
    for (auto& [name, data] : tensors_of(l)) {
      put<std::uint32_t>(out, static_cast<std::uint32_t>(name.size()));
      out += name;
      put<std::uint32_t>(out, 1);
      put<std::int64_t>(out, static_cast<std::int64_t>(data->size()));
      out.append(reinterpret_cast<const char*>(data->data()), data->size() * sizeof(float));
    }
  }
  const auto crc =
      static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(out.data()), static_cast<uInt>(out.size())));
  put<std::uint32_t>(out, crc);
  write_file_atomic(path, out);
}

void load_weights(Network& net, const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::string data = read_file(path);
  require(data.size() >= sizeof kMagic + 8 && std::memcmp(data.data(), kMagic, sizeof kMagic) == 0,
          "'" + file + "': not a mixtd weights file (bad magic; expected one written by mixtd)");
  const std::size_t body = data.size() - 4;
  std::uint32_t stored_crc;
  std::memcpy(&stored_crc, data.data() + body, 4);
  const auto crc =
      static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(body)));
  require(crc == stored_crc, "'" + file + "': weights file is corrupt or truncated (CRC mismatch)");

  std::map<std::string, std::pair<Layer*, std::vector<float>*>> slots;
  for (auto& l : net.layers) {
    if (l.expected_weight_size() == 0) continue;
    slots[l.name + ".weight"] = {&l, &l.weight};
    slots[l.name + ".bias"] = {&l, &l.bias};
    if (l.kind == LayerKind::BatchNorm) {
      slots[l.name + ".mean"] = {&l, &l.mean};
      slots[l.name + ".var"] = {&l, &l.var};
    }
  }
  Reader r{data, sizeof kMagic, file};
  const auto count = r.get<std::uint32_t>("tensor count");
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto len = r.get<std::uint32_t>("name length");
    r.need(len, "tensor name");
    const std::string name = data.substr(r.pos, len);
    r.pos += len;
    const auto rank = r.get<std::uint32_t>("rank");
    require(rank >= 1 && rank <= 8, "'" + file + "': tensor '" + name + "' has rank " + std::to_string(rank));
    std::int64_t n = 1;
    for (std::uint32_t d = 0; d < rank; ++d) n *= r.get<std::int64_t>("dims");
    require(n >= 0 && n < (std::int64_t{1} << 40), "'" + file + "': tensor '" + name + "' has a bad size");
    auto it = slots.find(name);
    require(it != slots.end(), "'" + file + "': tensor '" + name + "' matches no layer of network '" + net.name + "'");
    Layer& l = *it->second.first;
    const bool is_weight = name.size() > 7 && name.ends_with(".weight");
    const std::int64_t want = is_weight ? l.expected_weight_size() : l.expected_bias_size();
    require(n == want, "'" + file + "': tensor '" + name + "' has " + std::to_string(n) + " elements but layer '" +
                           l.name + "' needs " + std::to_string(want));
    r.need(static_cast<std::size_t>(n) * sizeof(float), "tensor data");
    auto& dst = *it->second.second;
    dst.resize(static_cast<std::size_t>(n));
    std::memcpy(dst.data(), data.data() + r.pos, static_cast<std::size_t>(n) * sizeof(float));
    for (std::size_t k = 0; k < dst.size(); ++k)
      require(std::isfinite(dst[k]), "'" + file + "': tensor '" + name + "' has a non-finite value at flat index " +
                                         std::to_string(k) + " (" +
                                         (std::isnan(dst[k]) ? "nan"
                                          : dst[k] > 0       ? "inf"
                                                             : "-inf") +
                                         "); weights must be finite");
    r.pos += static_cast<std::size_t>(n) * sizeof(float);
  }
  require(r.pos == body, "'" + file + "': trailing bytes after the last tensor");
  for (const auto& l : net.layers)
    require(l.expected_weight_size() == 0 || l.has_weights(),
            "'" + file + "': no tensors for layer '" + l.name + "' (expected '" + l.name + ".weight')");
  net.check_weights();
}

}  // namespace mixtd::net
