// Image-folder preprocessing speed: decode a JPEG and apply torchvision's
// Resize(256) + CenterCrop(224) (mixtd/nn/Image.h), one thread. Goal:
// >= 400 images/s for ImageNet-sized (500x375, 375x500) JPEGs.
//
//   build/bench/bench_image
//
// The JPEGs are synthesised in memory (libjpeg, quality 90, 4:2:0): value
// noise summed over octaves with a 1/f-like spectrum, plus a little grain,
// which compresses to about the bytes per pixel of a photograph.
#include <benchmark/benchmark.h>

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <jpeglib.h>
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mixtd/nn/Image.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

// One channel of multi-octave value noise in roughly [-1, 1].
std::vector<float> value_noise(int w, int h, std::mt19937& rng) {
  std::vector<float> out(static_cast<std::size_t>(w) * h, 0.0f);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  float amplitude = 0.5f;
  for (int cell = 128; cell >= 2; cell /= 2, amplitude *= 0.85f) {
    const int gw = w / cell + 2, gh = h / cell + 2;
    std::vector<float> grid(static_cast<std::size_t>(gw) * gh);
    for (auto& g : grid) g = u(rng);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const float fx = static_cast<float>(x) / cell, fy = static_cast<float>(y) / cell;
        const int ix = static_cast<int>(fx), iy = static_cast<int>(fy);
        const float tx = fx - ix, ty = fy - iy;
        const float* g = &grid[static_cast<std::size_t>(iy) * gw + ix];
        const float top = g[0] + (g[1] - g[0]) * tx, bottom = g[gw] + (g[gw + 1] - g[gw]) * tx;
        out[static_cast<std::size_t>(y) * w + x] += amplitude * (top + (bottom - top) * ty);
      }
  }
  return out;
}

Bytes encode_jpeg(const std::vector<std::uint8_t>& rgb, int w, int h) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buf, &size);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 90, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<std::uint8_t*>(rgb.data()) + static_cast<std::size_t>(cinfo.next_scanline) * w * 3;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  Bytes out(buf, buf + size);
  std::free(buf);
  return out;
}

Bytes synthetic_jpeg(int w, int h, unsigned seed) {
  std::mt19937 rng(seed);
  const auto luma = value_noise(w, h, rng), cb = value_noise(w, h, rng), cr = value_noise(w, h, rng);
  std::normal_distribution<float> grain(0.0f, 6.0f);
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(w) * h * 3);
  for (std::size_t i = 0; i < luma.size(); ++i) {
    const float y = 120.0f + 110.0f * luma[i], b = 40.0f * cb[i], r = 40.0f * cr[i];
    const float c[3] = {y + 1.4f * r, y - 0.34f * b - 0.71f * r, y + 1.77f * b};
    for (int k = 0; k < 3; ++k)
      rgb[3 * i + k] = static_cast<std::uint8_t>(std::clamp(std::lround(c[k] + grain(rng)), 0l, 255l));
  }
  return encode_jpeg(rgb, w, h);
}

const std::vector<Bytes>& jpegs() {
  static const std::vector<Bytes> set = [] {
    std::vector<Bytes> s;
    for (unsigned i = 0; i < 6; ++i) s.push_back(i % 2 ? synthetic_jpeg(375, 500, i) : synthetic_jpeg(500, 375, i));
    return s;
  }();
  return set;
}

void report(benchmark::State& state) {
  double bytes = 0;
  for (const auto& j : jpegs()) bytes += static_cast<double>(j.size());
  state.counters["images/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["KB/image"] = bytes / static_cast<double>(jpegs().size()) / 1024.0;
}

// What an image-folder data set does per image.
void BM_DecodeResizeCrop(benchmark::State& state) {
  const auto& set = jpegs();
  std::size_t i = 0;
  for (auto _ : state) {
    const Bytes& j = set[i++ % set.size()];
    auto out = mixtd::nn::resize_center_crop(mixtd::nn::decode_image(j.data(), j.size(), "bench"), 256, 224);
    benchmark::DoNotOptimize(out.pixels.data());
  }
  report(state);
}
BENCHMARK(BM_DecodeResizeCrop)->Unit(benchmark::kMillisecond);

// The two halves, to see where the time goes.
void BM_Decode(benchmark::State& state) {
  const auto& set = jpegs();
  std::size_t i = 0;
  for (auto _ : state) {
    const Bytes& j = set[i++ % set.size()];
    auto im = mixtd::nn::decode_image(j.data(), j.size(), "bench");
    benchmark::DoNotOptimize(im.pixels.data());
  }
  report(state);
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);

void BM_ResizeCrop(benchmark::State& state) {
  std::vector<mixtd::nn::RgbImage> decoded;
  for (const auto& j : jpegs()) decoded.push_back(mixtd::nn::decode_image(j.data(), j.size(), "bench"));
  std::size_t i = 0;
  for (auto _ : state) {
    auto out = mixtd::nn::resize_center_crop(decoded[i++ % decoded.size()], 256, 224);
    benchmark::DoNotOptimize(out.pixels.data());
  }
  report(state);
}
BENCHMARK(BM_ResizeCrop)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
