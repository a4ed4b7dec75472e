// NumPy's .npy format (format versions 1.0–3.0), as `numpy.save` writes it:
// the exchange format a PyTorch or Keras user produces in two lines
// (docs/data.md). Little-endian, C order only; a gzipped file (.npy.gz) is
// read too, so small committed fixtures can be compressed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mixtd::nn {

struct NpyArray {
  std::string descr;                // numpy dtype string, e.g. "<f4", "<i8", "|u1"
  std::vector<std::int64_t> shape;  // C order
  std::vector<std::uint8_t> data;   // count() * item size bytes

  std::int64_t count() const;
  std::string shape_str() const;  // "(64, 3, 224, 224)", as numpy prints it
};

// Reads `path`. Throws mixtd::Error naming the file and what is wrong (not an
// NPY file, Fortran order, big-endian, truncated data, a header that does
// not parse).
NpyArray read_npy(const std::filesystem::path& path);

// The contents as float32 (`descr` must be "<f4"), or int64 labels (from
// "<i8", "<i4", "|u1" or "|i1"). Throw mixtd::Error naming `name` and the dtype
// found, with the numpy call that converts it.
std::vector<float> npy_float32(const NpyArray& a, const std::string& name);
std::vector<std::int64_t> npy_labels(const NpyArray& a, const std::string& name);

// Writes a version-1.0 .npy atomically (what numpy.load reads back).
void write_npy(const std::filesystem::path& path, const std::string& descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes);

}  // namespace mixtd::nn
