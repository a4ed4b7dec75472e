// host: runs a mixtd accelerator on an Alveo U250 through XRT's native API
// and checks it against the golden executor (issue 22). `mixtd package`
// ships this file with frames.h and a kernel_config.h describing one design;
// `host --help` says how to run it.
//
// The data path is three kernels joined by AXI4-Streams at link time:
//   DDR -> mixtd_mm2s -> mixtd_kernel (the RTL pipeline) -> mixtd_s2mm -> DDR
// so the host sets only the memory and scalar arguments (the stream
// arguments are the linker's) and starts all three for each run.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "frames.h"
#include "kernel_config.h"
#include "xrt/xrt_bo.h"
#include "xrt/xrt_device.h"
#include "xrt/xrt_kernel.h"

namespace {

using namespace mixtd::host;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kInWords = MIXTD_IN_WORDS_PER_FRAME, kOutWords = MIXTD_OUT_WORDS_PER_FRAME;
static_assert(kInWords == MIXTD_IN_C * MIXTD_IN_H * MIXTD_IN_W, "kernel_config.h: input words != C*H*W");
static_assert(kOutWords == MIXTD_OUT_C * MIXTD_OUT_H * MIXTD_OUT_W, "kernel_config.h: output words != C*H*W");
static_assert(kInWords % MIXTD_IN_WORDS_PER_BEAT == 0 && kOutWords % MIXTD_OUT_WORDS_PER_BEAT == 0,
              "kernel_config.h: a frame must be a whole number of beats");
static_assert(MIXTD_IN_TDATA_BITS == 8 * MIXTD_IN_WORDS_PER_BEAT &&
                  MIXTD_OUT_TDATA_BITS == 8 * MIXTD_OUT_WORDS_PER_BEAT,
              "kernel_config.h: TDATA carries one int8 word per byte lane");

std::string usage() {
  std::ostringstream s;
  s << "Usage: host --xclbin FILE [--device N] [--weights FILE] [--frames FILE | --npy FILE] [--expected FILE]\n"
    << "            [--labels FILE] [--batch N] [--repeat R] [--timeout S]\n\n"
    << "Runs the mixtd accelerator linked into FILE on an Alveo card through XRT: writes the input\n"
    << "frames to the card, runs " << MIXTD_MM2S_NAME << " -> " << MIXTD_KERNEL_NAME << " -> " << MIXTD_S2MM_NAME
    << ", reads the outputs back,\n"
    << "compares them with the golden model's and reports throughput and batch-1 latency.\n\n"
    << "Options:\n"
    << "  --xclbin FILE    the linked design (required)\n"
    << "  --device N       XRT device index (default 0; `xbutil examine` lists the devices)\n"
    << "  --frames FILE    int8 input frames in stream order (default data/frames.bin)\n"
    << "  --npy FILE       float32 NCHW images instead, quantised to BFP8 at 2^" << MIXTD_INPUT_EXP << "\n"
    << "  --expected FILE  int8 outputs to compare word for word (mixtd package: data/expected.bin)\n"
    << "  --weights FILE   the weight stream, loaded once before the frames (default data/weights.bin)\n"
    << "  --labels FILE    int64 class labels, one per input frame: report top-1 (data/labels.bin)\n"
    << "  --batch N        frames in the throughput run (default: all; the input repeats if N is larger)\n"
    << "  --repeat R       one-frame runs whose median is the batch-1 latency (default 10)\n"
    << "  --timeout S      seconds to wait for a run before giving up (default 60)\n"
    << "  --help           this text\n\n"
    << "This design: input " << MIXTD_IN_C << "x" << MIXTD_IN_H << "x" << MIXTD_IN_W << " (" << kInWords
    << " words a frame), output " << MIXTD_OUT_C << "x" << MIXTD_OUT_H << "x" << MIXTD_OUT_W << " (" << kOutWords
    << " words), kernel clock " << MIXTD_CLOCK_MHZ << " MHz.\n\n"
    << "Examples:\n"
    << "  ./host --xclbin mixtd.xclbin --frames data/frames.bin --expected data/expected.bin \\\n"
    << "         --labels data/labels.bin\n"
    << "  ./host --xclbin mixtd.xclbin --npy images.npy --batch 4096 --repeat 100\n\n"
    << "Exit status 0 when every run completes and every output matches --expected, 1 otherwise.\n";
  return s.str();
}

struct Options {
  std::string xclbin, frames, npy, expected, labels, weights = "data/weights.bin";
  unsigned device = 0;
  std::int64_t batch = 0;  // 0: every input frame once
  std::int64_t repeat = 10;
  std::int64_t timeout_s = 60;
  bool help = false;
};

std::int64_t parse_int(const std::string& opt, const std::string& v, std::int64_t lo, std::int64_t hi) {
  std::size_t end = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (end == 0 || end != v.size() || x < lo || x > hi)
    throw Error(opt + ": '" + v + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

const std::string kValued[] = {"--xclbin", "--device", "--frames",  "--npy",    "--expected",
                               "--labels", "--batch",  "--weights", "--repeat", "--timeout"};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v;
    if (a == "--help" || a == "-h") {
      o.help = true;
      continue;
    }
    if (const auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
      if (a == "--help") throw Error("--help takes no value");
    } else if (std::find(std::begin(kValued), std::end(kValued), a) == std::end(kValued)) {
      throw Error("unknown option '" + a + "' (see host --help)");
    } else if (i + 1 < argc) {
      v = argv[++i];
    } else {
      throw Error(a + " needs a value (see host --help)");
    }
    const std::int64_t big = std::numeric_limits<std::uint32_t>::max();
    if (a == "--xclbin")
      o.xclbin = v;
    else if (a == "--device")
      o.device = static_cast<unsigned>(parse_int(a, v, 0, 255));
    else if (a == "--frames")
      o.frames = v;
    else if (a == "--npy")
      o.npy = v;
    else if (a == "--expected")
      o.expected = v;
    else if (a == "--weights")
      o.weights = v;
    else if (a == "--labels")
      o.labels = v;
    else if (a == "--batch")
      o.batch = parse_int(a, v, 1, big);
    else if (a == "--repeat")
      o.repeat = parse_int(a, v, 1, 1000000);
    else if (a == "--timeout")
      o.timeout_s = parse_int(a, v, 1, 86400);
    else
      throw Error("unknown option '" + a + "' (see host --help)");
  }
  if (o.help) return o;
  if (o.xclbin.empty()) throw Error("--xclbin FILE is required (see host --help)");
  if (!o.frames.empty() && !o.npy.empty()) throw Error("give --frames or --npy, not both");
  if (o.frames.empty() && o.npy.empty()) o.frames = "data/frames.bin";
  return o;
}

// The input frames in stream order, however they were given.
std::vector<std::int8_t> load_inputs(const Options& o) {
  if (o.npy.empty()) return read_int8_frames(o.frames, kInWords);
  const NpyFloat a = read_npy(o.npy);
  const std::int64_t n = npy_images(a, o.npy, MIXTD_IN_C, MIXTD_IN_H, MIXTD_IN_W);
  return to_stream_order(quantize(a.data, MIXTD_INPUT_EXP), n, MIXTD_IN_C, MIXTD_IN_H, MIXTD_IN_W);
}

// `frames` frames from `v` (whole frames of `per` words), cycling through it.
std::vector<std::int8_t> cycle(const std::vector<std::int8_t>& v, std::int64_t per, std::int64_t frames) {
  std::vector<std::int8_t> out(static_cast<std::size_t>(frames * per));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = v[i % v.size()];
  return out;
}

const char* state_name(ert_cmd_state s) {
  switch (s) {
    case ERT_CMD_STATE_COMPLETED:
      return "completed";
    case ERT_CMD_STATE_TIMEOUT:
      return "still running";
    case ERT_CMD_STATE_ERROR:
      return "error";
    case ERT_CMD_STATE_ABORT:
      return "aborted";
    default:
      return "not finished";
  }
}

// The three kernels of the data path and one xrt::run of each, reused for
// every run (only the scalar arguments change).
struct DataPath {
  xrt::kernel mm2s_k, core_k, s2mm_k;
  xrt::run mm2s, core, s2mm;

  DataPath(const xrt::device& dev, const xrt::uuid& id)
      : mm2s_k(dev, id, MIXTD_MM2S_NAME),
        // Exclusive: the host reads the kernel's WEIGHT_STATUS register.
        core_k(dev, id, MIXTD_KERNEL_NAME, xrt::kernel::cu_access_mode::exclusive),
        s2mm_k(dev, id, MIXTD_S2MM_NAME),
        mm2s(mm2s_k),
        core(core_k),
        s2mm(s2mm_k) {}

  // Runs `frames` frames through and returns the wall time in seconds. The
  // reader (s2mm) starts first and the writer (mm2s) last, so that nothing
  // is streamed before its consumer is running.
  double run(std::int64_t frames, std::int64_t timeout_s) {
    mm2s.set_arg(2, static_cast<unsigned>(frames * kInWords));
    mm2s.set_arg(3, static_cast<unsigned>(kInWords));
    core.set_arg(0, static_cast<std::uint32_t>(frames));
    s2mm.set_arg(2, static_cast<unsigned>(frames * kOutWords));
    const auto t0 = Clock::now();
    s2mm.start();
    core.start();
    mm2s.start();
    const auto deadline = t0 + std::chrono::seconds(timeout_s);
    ert_cmd_state st[3];
    xrt::run* runs[3] = {&mm2s, &core, &s2mm};
    for (int i = 0; i < 3; ++i) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      st[i] = runs[i]->wait(std::max(left, std::chrono::milliseconds(1)));
    }
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (st[0] != ERT_CMD_STATE_COMPLETED || st[1] != ERT_CMD_STATE_COMPLETED || st[2] != ERT_CMD_STATE_COMPLETED) {
      for (xrt::run* r : runs) {
        try {
          r->abort();
        } catch (const std::exception&) {  // a finished run cannot be aborted: nothing to undo
        }
      }
      throw Error("a run of " + std::to_string(frames) + " frames did not complete within " +
                  std::to_string(timeout_s) + " s: " MIXTD_MM2S_NAME " " + state_name(st[0]) +
                  ", " MIXTD_KERNEL_NAME " " + state_name(st[1]) + ", " MIXTD_S2MM_NAME " " + state_name(st[2]));
    }
    return secs;
  }
};

// The weights, once after the xclbin is loaded (UltraRAM has no contents
// in a bitstream): the weight mover streams weights.bin into the kernel's
// s_axis_weights, then the kernel's WEIGHT_STATUS must count every segment
// and refuse none.
void preload_weights(const xrt::device& dev, const xrt::uuid& id, const DataPath& path, const std::vector<char>& w,
                     const Options& o) {
  xrt::kernel k(dev, id, MIXTD_MM2S_WEIGHTS_NAME);
  xrt::bo bo(dev, (w.size() + 63) / 64 * 64, xrt::bo::flags::normal, k.group_id(0));
  bo.write(w.data(), w.size(), 0);
  bo.sync(XCL_BO_SYNC_BO_TO_DEVICE);
  xrt::run r = k(bo, static_cast<unsigned>(w.size()));
  if (r.wait(std::chrono::milliseconds(1000 * o.timeout_s)) != ERT_CMD_STATE_COMPLETED)
    throw Error("the weight preload (" + o.weights + ") did not complete within " + std::to_string(o.timeout_s) + " s");
  std::uint32_t st = 0;
  for (int i = 0; i < 100 && (st & 0xFFFFu) != MIXTD_WEIGHT_SEGMENTS; ++i)
    st = path.core_k.read_register(MIXTD_REG_WEIGHT_STATUS);
  if ((st & 0xFFFFu) != MIXTD_WEIGHT_SEGMENTS || (st >> 16) != 0)
    throw Error("the kernel took " + std::to_string(st & 0xFFFFu) + " of " + std::to_string(MIXTD_WEIGHT_SEGMENTS) +
                " weight segments and refused " + std::to_string(st >> 16) + " (" + o.weights + ")");
  std::cout << "host: weights loaded (" << w.size() << " bytes, " << MIXTD_WEIGHT_SEGMENTS << " memories)\n";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int run(const Options& o) {
  // Everything that can fail without a card is checked before opening one.
  xrt::xclbin xclbin;
  try {
    xclbin = xrt::xclbin(o.xclbin);
  } catch (const std::exception& e) {
    throw Error("xclbin '" + o.xclbin + "': " + e.what());
  }
  for (const char* name : {MIXTD_MM2S_NAME, MIXTD_MM2S_WEIGHTS_NAME, MIXTD_KERNEL_NAME, MIXTD_S2MM_NAME}) {
    std::string have;
    bool found = false;
    for (const auto& k : xclbin.get_kernels()) {
      found = found || k.get_name() == name;
      have += (have.empty() ? "" : ", ") + k.get_name();
    }
    if (!found)
      throw Error("xclbin '" + o.xclbin + "' has no kernel '" + name + "' (it has: " + (have.empty() ? "none" : have) +
                  "); was it linked from this package?");
  }
  const std::vector<char> weights = read_weight_stream(o.weights, MIXTD_WEIGHT_BYTES, MIXTD_WEIGHT_SEGMENTS);
  const std::vector<std::int8_t> inputs = load_inputs(o);
  const std::string input_file = o.npy.empty() ? o.frames : o.npy;
  const std::int64_t n_in = static_cast<std::int64_t>(inputs.size()) / kInWords;
  const std::int64_t batch = o.batch ? o.batch : n_in;
  if (batch * std::max(kInWords, kOutWords) > std::numeric_limits<std::uint32_t>::max())
    throw Error("--batch " + std::to_string(batch) + ": the movers take at most 4 GiB a run");
  std::vector<std::int8_t> expected;
  if (!o.expected.empty()) {
    expected = read_int8_frames(o.expected, kOutWords);
    if (static_cast<std::int64_t>(expected.size()) != n_in * kOutWords)
      throw Error(o.expected + ": " + std::to_string(expected.size() / kOutWords) + " frames, the input (" +
                  input_file + ") has " + std::to_string(n_in));
  }
  std::vector<std::int64_t> labels;
  if (!o.labels.empty()) labels = read_labels(o.labels, n_in, MIXTD_OUT_C);

  xrt::device dev;
  try {
    dev = xrt::device(o.device);
  } catch (const std::exception& e) {
    if (o.device == 0) throw Error(std::string("no Alveo device found (xbutil examine lists none); XRT: ") + e.what());
    throw Error("no Alveo device " + std::to_string(o.device) +
                " (xbutil examine lists the devices); XRT: " + e.what());
  }
  const std::string card = dev.get_info<xrt::info::device::name>();
  xrt::uuid id;
  try {
    id = dev.load_xclbin(xclbin);
  } catch (const std::exception& e) {
    throw Error("xclbin '" + o.xclbin + "' does not load on device " + std::to_string(o.device) + " (" + card +
                "): " + e.what());
  }
  DataPath path(dev, id);
  preload_weights(dev, id, path, weights, o);

  // The buffers sit in the memory banks the movers were linked to, in whole
  // 64-byte words: the movers access DDR a word at a time, the last one too.
  const std::vector<std::int8_t> in_words = cycle(inputs, kInWords, batch);
  const auto words64 = [](std::int64_t bytes) { return static_cast<std::size_t>((bytes + 63) / 64 * 64); };
  xrt::bo in_bo(dev, words64(batch * kInWords), xrt::bo::flags::normal, path.mm2s_k.group_id(0));
  xrt::bo out_bo(dev, words64(batch * kOutWords), xrt::bo::flags::normal, path.s2mm_k.group_id(0));
  in_bo.write(in_words.data(), in_words.size(), 0);
  in_bo.sync(XCL_BO_SYNC_BO_TO_DEVICE);
  path.mm2s.set_arg(0, in_bo);
  path.s2mm.set_arg(0, out_bo);

  std::cout << "host: " << card << " (device " << o.device << "), " << o.xclbin << "\n";
  const double secs = path.run(batch, o.timeout_s);
  std::vector<std::int8_t> out(static_cast<std::size_t>(batch * kOutWords));
  out_bo.sync(XCL_BO_SYNC_BO_FROM_DEVICE);
  out_bo.read(out.data(), out.size(), 0);
  const double fps = static_cast<double>(batch) / secs;
  // MIXTD_CLOCK_MHZ may be fractional (a derated clock): print it as a double.
  const double mhz = static_cast<double>(MIXTD_CLOCK_MHZ);
  std::printf("host: %lld frames in %.3f ms: %.1f FPS (%.0f kernel cycles a frame at %g MHz)\n",
              static_cast<long long>(batch), secs * 1e3, fps, mhz * 1e6 / fps, mhz);

  bool ok = true;
  if (!expected.empty()) {
    const std::vector<std::int8_t> want = cycle(expected, kOutWords, batch);
    if (const auto m = first_mismatch(out, want, kOutWords)) {
      std::int64_t bad = 0;
      const auto g = split_frames(out, kOutWords), w = split_frames(want, kOutWords);
      for (std::size_t f = 0; f < g.size(); ++f) bad += g[f] != w[f];
      std::cout << "host: MISMATCH against " << o.expected << ": frame " << m->frame << ", word " << m->word << ": got "
                << m->got << ", want " << m->want << " (" << bad << " of " << batch << " frames differ)\n";
      ok = false;
    } else {
      std::cout << "host: outputs match " << o.expected << " (" << batch << " frames x " << kOutWords << " words)\n";
    }
  }
  if (!labels.empty()) {
    // Top-1 of a C x 1 x 1 output: the stream order is the class order.
    if (MIXTD_OUT_H * MIXTD_OUT_W != 1) throw Error("--labels: the network's output is not a vector of class scores");
    std::int64_t right = 0;
    const auto frames = split_frames(out, kOutWords);
    for (std::size_t f = 0; f < frames.size(); ++f) right += top1(frames[f]) == labels[f % labels.size()];
    std::printf("host: top-1 %.2f%% (%lld of %lld) against %s\n", 100.0 * static_cast<double>(right) / batch,
                static_cast<long long>(right), static_cast<long long>(batch), o.labels.c_str());
  }

  // Batch-1 latency: the first frame alone, from start to the last wait.
  std::vector<double> lat;
  for (std::int64_t r = 0; r < o.repeat; ++r) lat.push_back(path.run(1, o.timeout_s));
  const double mid = median(lat);
  std::printf("host: batch-1 latency %.1f us, %.1f FPS (median of %lld runs, min %.1f us, max %.1f us)\n", mid * 1e6,
              1.0 / mid, static_cast<long long>(o.repeat), *std::min_element(lat.begin(), lat.end()) * 1e6,
              *std::max_element(lat.begin(), lat.end()) * 1e6);
  std::cout << "host: " << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (o.help) {
      std::cout << usage();
      return 0;
    }
    return run(o);
  } catch (const std::exception& e) {
    // One line whatever XRT's message looks like, so scripts can grep it.
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    std::cerr << "host: error: " << msg << "\n";
    return 1;
  }
}
