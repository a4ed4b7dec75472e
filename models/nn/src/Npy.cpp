#include "mixtd/nn/Npy.h"

#include <cstring>
#include <regex>

#include "mixtd/nn/Data.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::nn {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

std::size_t item_size(const std::string& descr) {
  if (descr.size() < 3) return 0;
  try {
    return static_cast<std::size_t>(std::stoul(descr.substr(2)));
  } catch (const std::exception&) {
    return 0;
  }
}

// The value of `key` in the header's Python dict literal, as text.
std::string dict_value(const std::string& header, const std::string& key, const std::string& file) {
  const std::regex re("'" + key + "'\\s*:\\s*('[^']*'|True|False|\\([^)]*\\))");
  std::smatch m;
  require(std::regex_search(header, m, re), file + ": NPY header has no '" + key + "' (header: " + header + ")");
  return m[1].str();
}

}  // namespace

std::int64_t NpyArray::count() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string NpyArray::shape_str() const {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

NpyArray read_npy(const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::vector<std::uint8_t> b = read_gzip(path);
  require(b.size() >= 10 && std::memcmp(b.data(), kMagic, 6) == 0,
          file + ": not a NumPy .npy file (no \\x93NUMPY magic; write it with numpy.save)");
  const int major = b[6];
  require(major >= 1 && major <= 3, file + ": NPY format version " + std::to_string(major) + " (legal 1..3)");
  std::size_t header_len = 0, at = 0;
  if (major == 1) {
    header_len = b[8] | (std::size_t{b[9]} << 8);
    at = 10;
  } else {
    require(b.size() >= 12, file + ": truncated NPY header");
    header_len = b[8] | (std::size_t{b[9]} << 8) | (std::size_t{b[10]} << 16) | (std::size_t{b[11]} << 24);
    at = 12;
  }
  require(at + header_len <= b.size(), file + ": truncated NPY header (" + std::to_string(b.size()) + " bytes)");
  const std::string header(b.begin() + static_cast<std::ptrdiff_t>(at),
                           b.begin() + static_cast<std::ptrdiff_t>(at + header_len));
  NpyArray a;
  std::string descr = dict_value(header, "descr", file);
  a.descr = descr.substr(1, descr.size() - 2);
  require(dict_value(header, "fortran_order", file) == "False",
          file + ": Fortran-order array (save a C-order array: numpy.ascontiguousarray)");
  require(a.descr.size() >= 3 && (a.descr[0] == '<' || a.descr[0] == '|'),
          file + ": dtype '" + a.descr + "' is not little-endian (use arr.astype(arr.dtype.newbyteorder('<')))");
  const std::string shape = dict_value(header, "shape", file);
  const std::regex num("\\d+");
  for (auto it = std::sregex_iterator(shape.begin(), shape.end(), num); it != std::sregex_iterator(); ++it) {
    const std::string d = it->str();
    require(d.size() <= 12, file + ": dimension " + d + " in shape " + shape + " is too large");
    a.shape.push_back(std::stoll(d));
  }
  const std::size_t item = item_size(a.descr);
  require(item > 0, file + ": unsupported dtype '" + a.descr + "'");
  const std::size_t need = static_cast<std::size_t>(a.count()) * item;
  const std::size_t have = b.size() - at - header_len;
  require(have >= need, file + ": truncated: shape " + a.shape_str() + " of " + a.descr + " needs " +
                            std::to_string(need) + " bytes of data, the file has " + std::to_string(have));
  a.data.assign(b.begin() + static_cast<std::ptrdiff_t>(at + header_len),
                b.begin() + static_cast<std::ptrdiff_t>(at + header_len + need));
  return a;
}

std::vector<float> npy_float32(const NpyArray& a, const std::string& name) {
  require(a.descr == "<f4",
          name + ": dtype " + a.descr + " where float32 (<f4) is needed (save x.astype(numpy.float32))");
  std::vector<float> v(static_cast<std::size_t>(a.count()));
  std::memcpy(v.data(), a.data.data(), v.size() * sizeof(float));
  return v;
}

std::vector<std::int64_t> npy_labels(const NpyArray& a, const std::string& name) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(a.count()));
  const auto* p = a.data.data();
  if (a.descr == "<i8") {
    std::memcpy(v.data(), p, v.size() * 8);
  } else if (a.descr == "<i4") {
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::int32_t x;
      std::memcpy(&x, p + 4 * i, 4);
      v[i] = x;
    }
  } else if (a.descr == "|u1" || a.descr == "|i1") {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = a.descr == "|u1" ? p[i] : static_cast<std::int8_t>(p[i]);
  } else {
    throw Error(name + ": dtype " + a.descr +
                " for labels, legal int64 (<i8), int32, uint8 or int8 (save y.astype(numpy.int64))");
  }
  return v;
}

void write_npy(const std::filesystem::path& path, const std::string& descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes) {
  NpyArray a;
  a.shape = shape;
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + a.shape_str() + ", }";
  // numpy pads the header with spaces so the data starts at a multiple of 64.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  write_file_atomic(path, out);
}

}  // namespace mixtd::nn
