// JPEG/PNG decoding and the evaluation transform, bit-exact to Pillow 9.4 and
// torchvision 0.14 (see Image.h). Each Pillow rule copied here names the
// Pillow source it comes from, so a later Pillow can be checked against it.
#include "mixtd/nn/Image.h"

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <jpeglib.h>
#include <jerror.h>  // JWRN_JPEG_EOF
// clang-format on
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csetjmp>
#include <cstring>
#include <fstream>
#include <iterator>

#include "mixtd/support/Error.h"

namespace mixtd::nn {
namespace {

// Pillow refuses images over 2 * Image.MAX_IMAGE_PIXELS (DecompressionBombError).
constexpr std::uint64_t kMaxPixels = 2ull * (1024ull * 1024 * 1024 / 4 / 3);

void check_size(std::uint64_t width, std::uint64_t height, const std::string& name) {
  require(width > 0 && height > 0,
          name + ": image has no pixels (" + std::to_string(width) + "x" + std::to_string(height) + ")");
  require(width * height <= kMaxPixels, name + ": image too large (" + std::to_string(width) + "x" +
                                            std::to_string(height) + " pixels; Pillow refuses more than " +
                                            std::to_string(kMaxPixels) + ")");
}

RgbImage blank(int width, int height) {
  RgbImage im;
  im.width = width;
  im.height = height;
  im.pixels.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3, 0);
  return im;
}

// ---------------------------------------------------------------- JPEG ----

// libjpeg reports errors through error_exit, which must not return: we
// longjmp back to decode_jpeg_rows, so a corrupt file throws instead of exit().
struct JpegError {
  jpeg_error_mgr mgr;  // first member: libjpeg hands back a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_fail(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  cinfo->err->format_message(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// libjpeg's memory source warns and fakes an end-of-image marker when the data
// runs out before the real one; Pillow refuses such a file ("image file is
// truncated"), so that warning is an error. Other warnings (e.g. extraneous
// bytes before a marker) Pillow ignores, and so do we.
void jpeg_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jpeg_fail(cinfo);
}

void jpeg_silent(j_common_ptr) {}

// The libjpeg part of decode_jpeg. No object with a destructor lives in this
// frame, so the longjmp out of libjpeg skips none; the caller destroys cinfo.
// Returns false on a libjpeg error (message in err); true with no pixels when
// `components` is a count Pillow cannot read.
bool decode_jpeg_rows(jpeg_decompress_struct& cinfo, JpegError& err, const std::uint8_t* data, std::size_t size,
                      const std::string& name, RgbImage& out, std::vector<std::uint8_t>& cmyk, int& components) {
  if (setjmp(err.jump)) return false;
  jpeg_create_decompress(&cinfo);  // can fail too (out of memory)
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  // Pillow's JpegImagePlugin picks the mode from the component count alone
  // (1: L, 3: RGB, 4: CMYK) and leaves the colour transform to libjpeg's
  // JFIF/Adobe heuristics; decoding defaults (JDCT_ISLOW, fancy upsampling).
  components = cinfo.num_components;
  if (components == 1)
    cinfo.out_color_space = JCS_GRAYSCALE;
  else if (components == 3)
    cinfo.out_color_space = JCS_RGB;
  else if (components == 4)
    cinfo.out_color_space = JCS_CMYK;
  else
    return true;
  check_size(cinfo.image_width, cinfo.image_height, name);
  jpeg_start_decompress(&cinfo);
  out = blank(static_cast<int>(cinfo.output_width), static_cast<int>(cinfo.output_height));
  const std::size_t w = cinfo.output_width;
  if (components == 4) cmyk.resize(w * 4);
  while (cinfo.output_scanline < cinfo.output_height) {
    std::uint8_t* row = out.pixels.data() + cinfo.output_scanline * w * 3;
    JSAMPROW target = components == 4 ? cmyk.data() : row;
    jpeg_read_scanlines(&cinfo, &target, 1);
    if (components == 1) {
      // Pillow's L -> RGB replicates; expand in place from the right.
      for (std::size_t x = w; x-- > 0;) row[3 * x] = row[3 * x + 1] = row[3 * x + 2] = row[x];
    } else if (components == 4) {
      // Pillow reads CMYK JPEGs as "CMYK;I" (Adobe's inverted polarity, for
      // every CMYK JPEG), then Convert.c's cmyk2rgb:
      //   nk = 255 - k; out = CLIP8(nk - MULDIV255(c, nk)).
      for (std::size_t x = 0; x < w; ++x) {
        const int nk = cmyk[4 * x + 3];  // 255 - (255 - k)
        for (int c = 0; c < 3; ++c) {
          const int tmp = (255 - cmyk[4 * x + c]) * nk + 128;  // MULDIV255
          row[3 * x + c] = static_cast<std::uint8_t>(std::clamp(nk - (((tmp >> 8) + tmp) >> 8), 0, 255));
        }
      }
    }
  }
  // Reads on to the end-of-image marker: Pillow refuses a file without one
  // (truncated) or with an error after the last scanline (broken data stream).
  jpeg_finish_decompress(&cinfo);
  return true;
}

RgbImage decode_jpeg(const std::uint8_t* data, std::size_t size, const std::string& name) {
  jpeg_decompress_struct cinfo{};  // zeroed: destroying it before creation is a no-op
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.emit_message = jpeg_message;
  err.mgr.output_message = jpeg_silent;
  struct Destroy {
    jpeg_decompress_struct* c;
    ~Destroy() { jpeg_destroy_decompress(c); }
  } destroy{&cinfo};

  RgbImage out;
  std::vector<std::uint8_t> cmyk;
  int components = 0;
  if (!decode_jpeg_rows(cinfo, err, data, size, name, out, cmyk, components)) {
    const bool truncated = err.mgr.msg_code == JWRN_JPEG_EOF;
    throw Error(name + (truncated ? ": truncated JPEG (" : ": corrupt or unsupported JPEG (") + err.message + ")");
  }
  require(components == 1 || components == 3 || components == 4,
          name + ": unsupported JPEG with " + std::to_string(components) +
              " components (Pillow reads 1 (grey), 3 (colour) or 4 (CMYK))");
  return out;
}

// ----------------------------------------------------------------- PNG ----

struct PngSource {
  const std::uint8_t* data;
  std::size_t size, pos;
  bool truncated;
  char message[200];
};

void png_read_memory(png_structp png, png_bytep out, png_size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->size - src->pos) {
    src->truncated = true;
    png_error(png, "the data ends early");
  }
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

// Keeps libpng's message and jumps back to decode_png_rows (libpng's error
// functions must not return).
[[noreturn]] void png_fail(png_structp png, png_const_charp message) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof src->message, "%s", message);
  png_longjmp(png, 1);
}

void png_warn(png_structp, png_const_charp) {}

struct PngRaw {
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  std::size_t rowbytes = 0;
  std::vector<std::uint8_t> rows;  // as stored: packed samples, 16-bit big-endian
  std::array<std::uint8_t, 256 * 3> palette{};
};

// Pillow checks the CRC of every chunk before the first IDAT and of none from
// there on; libpng checks every critical chunk's (IDAT's too). So the chunks
// before IDAT are checked here, and libpng is told not to check.
void check_png_crcs(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const auto be32 = [](const std::uint8_t* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
  };
  for (std::size_t pos = 8; pos + 8 <= size;) {
    const std::uint32_t length = be32(data + pos);
    const std::string type(reinterpret_cast<const char*>(data + pos + 4), 4);
    if (type == "IDAT" || length > size - pos - 12) return;  // a short chunk: libpng says "truncated"
    const auto crc = crc32(crc32(0, nullptr, 0), data + pos + 4, length + 4);
    require(crc == be32(data + pos + 8 + length), name + ": corrupt PNG (" + type + ": CRC error)");
    pos += 12 + std::size_t{length};
  }
}

// The libpng part of decode_png: reads the rows untransformed (bar Adam7
// de-interlacing); PngRaw lives in the caller, so the longjmp skips no
// destructor. Returns false on a libpng error (message in src).
bool decode_png_rows(png_structp png, png_infop info, const std::string& name, PngRaw& raw,
                     std::vector<png_bytep>& pointers) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);  // check_png_crcs did
  png_read_info(png, info);
  int interlace = 0;
  png_get_IHDR(png, info, &raw.width, &raw.height, &raw.bit_depth, &raw.color_type, &interlace, nullptr, nullptr);
  check_size(raw.width, raw.height, name);
  if (raw.color_type == PNG_COLOR_TYPE_PALETTE) {
    // Pillow's palette starts as a grey ramp (ImagingPaletteNew) and PLTE
    // overwrites its first entries; indices past PLTE keep the ramp.
    for (int i = 0; i < 256; ++i) raw.palette[3 * i] = raw.palette[3 * i + 1] = raw.palette[3 * i + 2] = i;
    png_colorp plte = nullptr;
    int count = 0;
    if (png_get_PLTE(png, info, &plte, &count) & PNG_INFO_PLTE)
      for (int i = 0; i < std::min(count, 256); ++i) {
        raw.palette[3 * i] = plte[i].red;
        raw.palette[3 * i + 1] = plte[i].green;
        raw.palette[3 * i + 2] = plte[i].blue;
      }
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  raw.rowbytes = png_get_rowbytes(png, info);
  raw.rows.resize(raw.rowbytes * raw.height);
  pointers.resize(raw.height);
  for (png_uint_32 y = 0; y < raw.height; ++y) pointers[y] = raw.rows.data() + y * raw.rowbytes;
  png_read_image(png, pointers.data());
  // No png_read_end: Pillow does not insist on the chunks after the image data.
  return true;
}

// Sample x of a row packed at `bits` (1, 2, 4 or 8) bits, most significant first.
inline int packed(const std::uint8_t* row, std::size_t x, int bits) {
  if (bits == 8) return row[x];
  const std::size_t bit = x * static_cast<std::size_t>(bits);
  return (row[bit / 8] >> (8 - bits - static_cast<int>(bit % 8))) & ((1 << bits) - 1);
}

// PngImagePlugin's modes and Convert.c's conversions to RGB:
//  grey 1/2/4/8 bits: "1"/"L;2"/"L;4"/"L", scaled to 0..255 and replicated;
//  grey 16: mode "I" (the full value), i2rgb clips it at 255;
//  grey+alpha, RGB, RGBA: 16-bit samples keep their high byte (";16B");
//  palette: looked up in Pillow's palette; tRNS and alpha are dropped.
RgbImage png_to_rgb(const PngRaw& raw, const std::string& name) {
  const int d = raw.bit_depth;
  const int bytes = d == 16 ? 2 : 1;  // per sample, for 8 and 16 bits
  RgbImage out = blank(static_cast<int>(raw.width), static_cast<int>(raw.height));
  for (std::size_t y = 0; y < raw.height; ++y) {
    const std::uint8_t* r = raw.rows.data() + y * raw.rowbytes;
    std::uint8_t* o = out.pixels.data() + y * raw.width * 3;
    for (std::size_t x = 0; x < raw.width; ++x, o += 3) {
      switch (raw.color_type) {
        case PNG_COLOR_TYPE_GRAY: {
          int g = 0;
          if (d == 16)
            g = std::min((r[2 * x] << 8) | r[2 * x + 1], 255);
          else
            g = packed(r, x, d) * (255 / ((1 << d) - 1));
          o[0] = o[1] = o[2] = static_cast<std::uint8_t>(g);
          break;
        }
        case PNG_COLOR_TYPE_GRAY_ALPHA:
          o[0] = o[1] = o[2] = r[2 * bytes * x];
          break;
        case PNG_COLOR_TYPE_RGB:
        case PNG_COLOR_TYPE_RGB_ALPHA: {
          const std::size_t step = raw.color_type == PNG_COLOR_TYPE_RGB ? 3 : 4;
          for (int c = 0; c < 3; ++c) o[c] = r[(step * x + c) * bytes];
          break;
        }
        case PNG_COLOR_TYPE_PALETTE:
          std::memcpy(o, &raw.palette[3 * packed(r, x, d)], 3);
          break;
        default:
          throw Error(name + ": unsupported PNG colour type " + std::to_string(raw.color_type));
      }
    }
  }
  return out;
}

RgbImage decode_png(const std::uint8_t* data, std::size_t size, const std::string& name) {
  PngSource src{data, size, 0, false, {}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_fail, png_warn);
  require(png != nullptr, name + ": cannot start libpng");
  png_infop info = png_create_info_struct(png);
  struct Destroy {
    png_structp* p;
    png_infop* i;
    ~Destroy() { png_destroy_read_struct(p, i, nullptr); }
  } destroy{&png, &info};
  require(info != nullptr, name + ": cannot start libpng");
  png_set_read_fn(png, &src, png_read_memory);

  check_png_crcs(data, size, name);
  PngRaw raw;
  std::vector<png_bytep> pointers;
  if (!decode_png_rows(png, info, name, raw, pointers)) {
    throw Error(name + (src.truncated ? ": truncated PNG (" : ": corrupt or unsupported PNG (") + src.message + ")");
  }
  return png_to_rgb(raw, name);
}

// ------------------------------------------------------------ resample ----

// Pillow's libImaging/Resample.c, 8 bits per channel.
constexpr int kPrecisionBits = 32 - 8 - 2;

// One axis's filter (precompute_coeffs then normalize_coeffs_8bpc): output
// index i reads `count[i]` inputs from `first[i]` with weights
// k[i * ksize ...], fixed point with kPrecisionBits fraction bits.
struct Taps {
  int ksize = 0;
  std::vector<int> first, count;
  std::vector<std::int32_t> k;
};

Taps bilinear_taps(int in_size, int out_size) {
  // The box is float in Pillow; for whole images it is exactly [0, in_size].
  const float in0 = 0.0f, in1 = static_cast<float>(in_size);
  const double scale = static_cast<double>(in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);  // downscaling widens the filter: antialiasing
  const double support = 1.0 * filterscale;         // bilinear's support is 1
  Taps t;
  t.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<std::size_t>(out_size));
  t.count.resize(static_cast<std::size_t>(out_size));
  t.k.assign(static_cast<std::size_t>(out_size) * static_cast<std::size_t>(t.ksize), 0);
  std::vector<double> w(static_cast<std::size_t>(t.ksize));
  for (int xx = 0; xx < out_size; ++xx) {
    // Expressions as in Pillow, so that the doubles round identically (the
    // file is built with -ffp-contract=off: no fused multiply-adds).
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), in_size) - xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double arg = std::fabs((x + xmin - center + 0.5) * ss);
      w[static_cast<std::size_t>(x)] = arg < 1.0 ? 1.0 - arg : 0.0;  // bilinear_filter
      ww += w[static_cast<std::size_t>(x)];
    }
    std::int32_t* k = &t.k[static_cast<std::size_t>(xx) * static_cast<std::size_t>(t.ksize)];
    for (int x = 0; x < xmax; ++x) {
      double v = w[static_cast<std::size_t>(x)];
      if (ww != 0.0) v /= ww;
      k[x] = v < 0 ? static_cast<std::int32_t>(-0.5 + v * (1 << kPrecisionBits))
                   : static_cast<std::int32_t>(0.5 + v * (1 << kPrecisionBits));
    }
    t.first[static_cast<std::size_t>(xx)] = xmin;
    t.count[static_cast<std::size_t>(xx)] = std::max(xmax, 0);
  }
  return t;
}

inline std::uint8_t clip8(std::int32_t v) {
  if (v >= (1 << kPrecisionBits << 8)) return 255;
  if (v <= 0) return 0;
  return static_cast<std::uint8_t>(v >> kPrecisionBits);
}

// The window [x0, x0 + w) x [y0, y0 + h) of Pillow's resize of `in` to
// out_w x out_h. Every output pixel is computed on its own in Pillow, so a
// window equals the same pixels of the whole resize: the horizontal pass runs
// on only the input rows the window's vertical filter reads, and only for the
// window's columns.
RgbImage resample_window(const RgbImage& in, int out_w, int out_h, int x0, int y0, int w, int h) {
  const bool need_h = out_w != in.width, need_v = out_h != in.height;
  const std::size_t in_row = static_cast<std::size_t>(in.width) * 3, row = static_cast<std::size_t>(w) * 3;
  Taps tv;
  int y_first = y0, y_last = y0 + h;  // input rows needed
  if (need_v) {
    tv = bilinear_taps(in.height, out_h);
    y_first = tv.first[static_cast<std::size_t>(y0)];
    y_last = y_first;
    for (int y = y0; y < y0 + h; ++y)
      y_last = std::max(y_last, tv.first[static_cast<std::size_t>(y)] + tv.count[static_cast<std::size_t>(y)]);
  }

  // Horizontal pass: rows [y_first, y_last) of `in` -> `mid`, w columns.
  RgbImage mid = blank(w, y_last - y_first);
  if (need_h) {
    const Taps th = bilinear_taps(in.width, out_w);
    for (int y = y_first; y < y_last; ++y) {
      const std::uint8_t* src = in.pixels.data() + static_cast<std::size_t>(y) * in_row;
      std::uint8_t* dst = mid.pixels.data() + static_cast<std::size_t>(y - y_first) * row;
      for (int xx = 0; xx < w; ++xx, dst += 3) {
        const auto i = static_cast<std::size_t>(x0 + xx);
        const std::int32_t* k = &th.k[i * static_cast<std::size_t>(th.ksize)];
        const std::uint8_t* p = src + static_cast<std::size_t>(th.first[i]) * 3;
        std::int32_t s0 = 1 << (kPrecisionBits - 1), s1 = s0, s2 = s0;
        for (int x = 0; x < th.count[i]; ++x, p += 3) {
          s0 += p[0] * k[x];
          s1 += p[1] * k[x];
          s2 += p[2] * k[x];
        }
        dst[0] = clip8(s0);
        dst[1] = clip8(s1);
        dst[2] = clip8(s2);
      }
    }
  } else {
    for (int y = y_first; y < y_last; ++y)
      std::memcpy(mid.pixels.data() + static_cast<std::size_t>(y - y_first) * row,
                  in.pixels.data() + static_cast<std::size_t>(y) * in_row + static_cast<std::size_t>(x0) * 3, row);
  }
  if (!need_v) return mid;  // exactly the window's rows already

  // Vertical pass: tap by tap over whole rows, which the compiler vectorises.
  RgbImage out = blank(w, h);
  std::vector<std::int32_t> acc(row);
  for (int yy = 0; yy < h; ++yy) {
    const auto i = static_cast<std::size_t>(y0 + yy);
    const std::int32_t* k = &tv.k[i * static_cast<std::size_t>(tv.ksize)];
    std::fill(acc.begin(), acc.end(), 1 << (kPrecisionBits - 1));
    for (int y = 0; y < tv.count[i]; ++y) {
      const std::uint8_t* src = mid.pixels.data() + static_cast<std::size_t>(tv.first[i] + y - y_first) * row;
      const std::int32_t ky = k[y];
      for (std::size_t x = 0; x < row; ++x) acc[x] += src[x] * ky;
    }
    std::uint8_t* dst = out.pixels.data() + static_cast<std::size_t>(yy) * row;
    for (std::size_t x = 0; x < row; ++x) dst[x] = clip8(acc[x]);
  }
  return out;
}

void check_image(const RgbImage& in, const char* what) {
  require(in.width > 0 && in.height > 0 &&
              in.pixels.size() == static_cast<std::size_t>(in.width) * static_cast<std::size_t>(in.height) * 3,
          std::string(what) + ": the input image is " + std::to_string(in.width) + "x" + std::to_string(in.height) +
              " with " + std::to_string(in.pixels.size()) + " bytes (expected width * height * 3 > 0)");
}

// Python's round(d / 2.0) for d >= 0: halves go to the even neighbour.
int half_round_even(int d) {
  const int k = d / 2;
  return d % 2 == 0 || k % 2 == 0 ? k : k + 1;
}

}  // namespace

RgbImage decode_image(const std::uint8_t* data, std::size_t size, const std::string& name) {
  require(size > 0, name + ": empty file, not an image");
  // By content, as Pillow's JpegImagePlugin/PngImagePlugin _accept do.
  static constexpr std::uint8_t kJpeg[] = {0xFF, 0xD8, 0xFF};
  static constexpr std::uint8_t kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (size >= sizeof kJpeg && std::memcmp(data, kJpeg, sizeof kJpeg) == 0) return decode_jpeg(data, size, name);
  if (size >= sizeof kPng && std::memcmp(data, kPng, sizeof kPng) == 0) return decode_png(data, size, name);

  // Name the formats a user is likely to have, else show the first bytes.
  const std::string head(reinterpret_cast<const char*>(data), std::min<std::size_t>(size, 12));
  std::string what;
  if (head.rfind("GIF8", 0) == 0) what = "a GIF image";
  if (head.rfind("BM", 0) == 0) what = "a BMP image";
  if (head.rfind("RIFF", 0) == 0 && head.size() == 12 && head.substr(8) == "WEBP") what = "a WebP image";
  if (head.rfind("II*", 0) == 0 || head.rfind("MM", 0) == 0) what = "a TIFF image";
  if (what.empty()) {
    char hex[4];
    what = "first bytes";
    for (std::size_t i = 0; i < std::min<std::size_t>(size, 8); ++i) {
      std::snprintf(hex, sizeof hex, " %02x", data[i]);
      what += hex;
    }
  }
  throw Error(name + ": not a JPEG or PNG image (" + what + "; mixtd reads JPEG and PNG)");
}

RgbImage decode_image_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  require(in.good(), file.string() + ": cannot open (missing file?)");
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  require(!in.bad(), file.string() + ": read error");
  return decode_image(bytes.data(), bytes.size(), file.string());
}

RgbImage resize_bilinear(const RgbImage& in, int width, int height) {
  check_image(in, "resize_bilinear");
  require(width > 0 && height > 0,
          "resize_bilinear: target size " + std::to_string(width) + "x" + std::to_string(height) + " must be positive");
  return resample_window(in, width, height, 0, 0, width, height);
}

RgbImage resize_center_crop(const RgbImage& in, int resize, int crop) {
  check_image(in, "resize_center_crop");
  require(resize > 0 && crop > 0, "resize_center_crop: resize " + std::to_string(resize) + " and crop " +
                                      std::to_string(crop) + " must be positive");
  // torchvision's _compute_resized_output_size: int(size * long / short),
  // a correctly rounded double quotient truncated.
  const int shorter = std::min(in.width, in.height), longer = std::max(in.width, in.height);
  const int new_long = static_cast<int>(static_cast<double>(static_cast<long long>(resize) * longer) / shorter);
  const int rw = in.width <= in.height ? resize : new_long;
  const int rh = in.width <= in.height ? new_long : resize;

  // CenterCrop: pad (left/top gets the smaller half) when the crop is larger,
  // then top = int(round((h - crop) / 2.0)), left likewise.
  const int pad_left = crop > rw ? (crop - rw) / 2 : 0, pad_top = crop > rh ? (crop - rh) / 2 : 0;
  const int top = half_round_even(std::max(rh, crop) - crop), left = half_round_even(std::max(rw, crop) - crop);
  // Crop pixel (i, j) is resized pixel (oy + i, ox + j), zero outside it.
  const int oy = top - pad_top, ox = left - pad_left;
  const int y0 = std::max(oy, 0), y1 = std::min(oy + crop, rh);
  const int x0 = std::max(ox, 0), x1 = std::min(ox + crop, rw);
  RgbImage out = blank(crop, crop);
  if (y1 <= y0 || x1 <= x0) return out;
  const RgbImage window = resample_window(in, rw, rh, x0, y0, x1 - x0, y1 - y0);
  const std::size_t row = static_cast<std::size_t>(window.width) * 3;
  for (int y = 0; y < window.height; ++y)
    std::memcpy(out.pixels.data() + (static_cast<std::size_t>(y0 - oy + y) * crop + (x0 - ox)) * 3,
                window.pixels.data() + static_cast<std::size_t>(y) * row, row);
  return out;
}

}  // namespace mixtd::nn
