// Bad input on the command line (issue 24): each reproduction is one row —
// the arguments, the exit code (2 usage, 1 bad input), the text of the one
// `mixtd: error: ` line, and the path that must not have been written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "RunCli.h"

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::StartsWith;

namespace {

using mixtd::testing_cli::count_lines;
using mixtd::testing_cli::Result;
using mixtd::testing_cli::run;

std::string last_line(const std::string& s) {
  const std::string t = s.empty() || s.back() != '\n' ? s : s.substr(0, s.size() - 1);
  const auto at = t.rfind('\n');
  return at == std::string::npos ? t : t.substr(at + 1);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Designs shared by the rows: tiny (zc706), resnet18 (u250, a large frame)
// and tiny:width=2 with a skip FIFO too shallow to ever drain (a deadlock).
struct Scratch {
  fs::path dir, base, r18, deadlock, file, folder;
  Scratch() {
    dir = fs::temp_directory_path() / ("mixtd_bad_input_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    base = dir / "base.yaml";
    r18 = dir / "r18.yaml";
    deadlock = dir / "deadlock.yaml";
    file = dir / "a-file";
    folder = dir / "a-folder";
    std::ofstream(file) << "not a folder\n";
    fs::create_directories(folder);
    EXPECT_EQ(run("solve tiny --device zc706 -o " + base.string()).code, 0);
    EXPECT_EQ(run("solve resnet18 --device u250 -o " + r18.string()).code, 0);
    const fs::path w2 = dir / "w2.yaml";
    EXPECT_EQ(run("solve tiny:width=2 --device zc706 -o " + w2.string()).code, 0);
    std::string text = read_text(w2);
    const auto at = text.find("fifo_depth: ");
    text.insert(text.find('\n', at) + 1, "fifo_depths: {\"conv1/stage0->add1\": 1}\n");
    std::ofstream(deadlock) << text;
    text = read_text(base);
    text.insert(text.find("\ndevice:") + 1, "factors: gone.factors\n");
    std::ofstream(dir / "no-factors.yaml") << text;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const Scratch& scratch() {
  static const Scratch s;
  return s;
}

struct Row {
  std::string args;
  int code;
  std::string text;         // in the one error line
  fs::path must_not_exist;  // written by mistake ("" = nothing to check)
};

TEST(BadInput, EveryReproductionIsOneLineAndWritesNothing) {
  const Scratch& s = scratch();
  const std::string base = s.base.string(), file = s.file.string(), folder = s.folder.string();
  const fs::path out = s.dir / "out";
  const std::vector<Row> rows = {
      // 1. CLI11's errors: one line, the subcommand, the legal values.
      {"frobnicate", 2, "mixtd: error: unknown subcommand 'frobnicate': legal info, zoo, convert,", {}},
      {"", 2, "mixtd: error: a subcommand is needed: legal info, zoo,", {}},
      {"dataset frob", 2, "mixtd: error: dataset: unknown subcommand 'frob': legal generate", {}},
      {"simulate " + base + " --frames 0", 2, "mixtd: error: simulate: --frames 0: legal 1 .. 1000000", {}},
      {"simulate " + base + " --frames x", 2, "simulate: --frames x: not a whole number; legal 1 .. 1000000", {}},
      {"simulate " + base + " --frames", 2, "simulate: --frames needs a value (INT)", {}},
      {"simulate " + base + " --bogus", 2, "simulate: unexpected argument(s) --bogus", {}},
      {"simulate " + base + " --seed x", 2, "simulate: --seed x: not a non-negative whole number", {}},
      {"simulate " + (s.dir / "nope.yaml").string(),
       2,
       "simulate: DESIGN " + (s.dir / "nope.yaml").string() + ": no such file",
       {}},
      {"solve tiny --objective fast -o " + out.string(), 2, "solve: --objective fast: legal latency|throughput", out},
      {"predictor train x.csv -o " + out.string() + " --trees 0", 2, "predictor train: --trees 0: legal 1 .. 100000",
       out},
      {"solve tiny --device zc706 --method anneal --moves 99999999999999 -o " + out.string(), 2,
       "solve: --moves 99999999999999: legal 1 .. 100000000", out},
      {"cosim " + base + " -j 0", 2, "cosim: --jobs 0: legal 1 .. 256", {}},
      // A budget is a fraction of the device: a negative one once meant "the
      // design's own" silently.
      {"solve tiny --device zc706 --budget -0.5 -o " + out.string(), 2,
       "solve: --budget -0.5: must be a fraction of the device in (0, 1]", out},
      {"solve tiny --device zc706 --budget 0 -o " + out.string(), 2,
       "solve: --budget 0: must be a fraction of the device in (0, 1]", out},
      {"dataset generate --network tiny --device zc706 -n 1 -o " + out.string() + " --budget -1", 2,
       "dataset generate: --budget -1: must be a fraction of the device in (0, 1]", out},
      // Training options: a negative rate or decay, or no threads, once ran.
      {"train tiny -o " + out.string() + " --lr -1", 2, "train: --lr -1: legal 0 .. 10", out},
      {"train tiny -o " + out.string() + " --weight-decay -0.1", 2, "train: --weight-decay -0.1: legal 0 .. 1", out},
      {"train tiny -o " + out.string() + " --threads 0", 2, "train: --threads 0: legal 1 .. 256", out},
      {"finetune tiny -o " + out.string() + " --lr -1", 2, "finetune: --lr -1: legal 0 .. 10", out},
      {"finetune tiny -o " + out.string() + " --max-images -3", 2, "finetune: --max-images -3: legal 0 .. 1000000000",
       out},
      {"finetune tiny -o " + out.string() + " --progress -1", 2, "finetune: --progress -1: legal 0 .. 1000000000", out},
      // The fine-tuned design names the factors file, so it needs one, and a design to start from.
      {"finetune tiny -o " + out.string() + " --design-out " + (s.dir / "ft.yaml").string(), 2,
       "finetune: --design-out requires --factors", out},
      {"finetune tiny -o " + out.string() + " --factors " + (s.dir / "ft.factors").string() + " --design-out " +
           (s.dir / "ft.yaml").string(),
       1, "--design-out: 'tiny' is not a design.yaml", out},
      {"finetune tiny -o " + out.string() + " --factors " + folder, 1, "--factors " + folder + ": is a folder", out},
      {"simulate " + s.dir.string() + "/no-factors.yaml --functional",
       1,
       "design 'tiny': factors file '" + (s.dir / "gone.factors").string() + "' not found",
       {}},
      {"predictor train x.csv -o " + out.string() + " --mtry 99999999999", 2,
       "predictor train: --mtry 99999999999: too large or not a whole number", out},
      // 2. Non-finite numbers, on a flag with a range and on one without.
      {"simulate " + base + " --stall nan", 2, "simulate: --stall nan: not a finite number; legal 0 .. 1", {}},
      {"simulate " + base + " --stall 1.5", 2, "simulate: --stall 1.5: legal 0 .. 1", {}},
      {"train tiny -o " + out.string() + " --lr inf", 2, "train: --lr inf: not a finite number", out},
      {"dataset generate --network tiny --device zc706 -n 1 -o " + out.string() + " --mac-ratio nan", 2,
       "dataset generate: --mac-ratio nan: not a finite number", out},
      // 3. Output paths, checked before any work.
      {"gen-rtl " + base + " -o /proc/rtl", 1, "--output /proc/rtl: cannot create a folder in /proc", {}},
      {"gen-rtl " + base + " -o " + file, 1, "--output " + file + ": is a file; a folder is needed", {}},
      {"package " + base + " -o " + file, 1, "--output " + file + ": is a file; a folder is needed", {}},
      {"dataset generate --network tiny --device zc706 -n 1 -o " + folder,
       1,
       "--output " + folder + ": is a folder; a file name is needed",
       {}},
      {"solve tiny --device zc706 -o " + folder, 1, "--output " + folder + ": is a folder", {}},
      {"solve tiny --device zc706 -o " + (s.dir / "no" / "x.yaml").string(), 1,
       "no such folder " + (s.dir / "no").string(), s.dir / "no"},
      {"simulate " + base + " --trace /nonexistent/x.vcd",
       1,
       "--trace /nonexistent/x.vcd: no such folder /nonexistent",
       {}},
      {"simulate " + base + " --trace " + (s.dir / "no" / "t.vcd").string(), 1, "no such folder", s.dir / "no"},
      {"resources fit " + std::string(MIXTD_SOURCE_DIR) + "/docs/rtl-resources.csv --rows " + folder,
       1,
       "--rows " + folder + ": is a folder",
       {}},
      {"train tiny -o /proc/x.onnx", 1, "--output /proc/x.onnx: cannot create a file in /proc", {}},
      {"train tiny -o " + out.string() + " --checkpoint " + folder, 1, "--checkpoint " + folder + ": is a folder", out},
      {"search tiny --device zc706 --target-fps 1 -o " + file, 1, "--output " + file + ": is a file", {}},
      {"search tiny --device zc706 --target-fps 1 -o " + out.string() + " --query-cache " + folder, 1,
       "--query-cache " + folder + ": is a folder", out},
      {"simulate " + base + " --trace " + (s.dir / std::string(300, 'a')).string() + ".vcd",
       1,
       "File name too long",
       {}},
      {"cosim " + base + " --vcd /proc/x.vcd", 1, "--vcd /proc/x.vcd: cannot create a file in /proc", {}},
      {"convert tiny -o /proc/x.yaml", 1, "--output /proc/x.yaml: cannot create a file in /proc", {}},
      {"accuracy tiny --full --predictions " + folder, 1, "--predictions " + folder + ": is a folder", {}},
      // 4. The simulator's bounds: frames, and memory from the design.
      {"simulate " + base + " --frames 100000000", 2, "simulate: --frames 100000000: legal 1 .. 1000000", {}},
      {"simulate " + s.r18.string() + " --frames 1000000",
       1,
       "--frames 1000000 of design 'resnet18' need about 152 GB of simulator memory",
       {}},
      {"simulate " + base + " --cycle-limit 0", 2, "simulate: --cycle-limit 0: legal 1 .. 1000000000000", {}},
      // 5. Unsigned flags: CLI11's strtoull took -1 as 2^64 - 1 and clamped
      // anything beyond 64 bits to it (refuse_negative_unsigned).
      {"dataset generate --network tiny --device zc706 -n 1 -o " + out.string() + " --seed -1", 2,
       "dataset generate: --seed -1: not a non-negative whole number", out},
      {"dataset generate --network tiny --device zc706 -n 1 -o " + out.string() + " --seed 99999999999999999999", 2,
       "dataset generate: --seed 99999999999999999999: too large (more than 64 bits)", out},
      {"search tiny --device zc706 --target-fps 1 -o " + out.string() + " --seed -1", 2,
       "search: --seed -1: not a non-negative whole number", out},
      {"gen-rtl " + base + " -o " + out.string() + " --seed -7", 2,
       "gen-rtl: --seed -7: not a non-negative whole number", out},
      {"simulate " + base + " --seed -1", 2, "simulate: --seed -1: not a non-negative whole number", {}},
      // 6. A data folder whose name the file system refuses (too long) is no
      // folder, not an internal error from std::filesystem.
      {"accuracy tiny --dataset fmnist:" + (s.dir / std::string(300, 'f')).string(),
       1,
       std::string(300, 'f') + ": no such folder (Fashion-MNIST",
       {}},
      {"accuracy tiny --dataset cifar10:" + (s.dir / std::string(300, 'c')).string(),
       1,
       std::string(300, 'c') + ": no such folder (cifar10:DIR",
       {}},
      {"accuracy tiny --dataset imagefolder:" + (s.dir / std::string(300, 'i')).string(),
       1,
       std::string(300, 'i') + ": no such folder",
       {}},
  };
  const std::string file_before = read_text(s.file);
  for (const Row& row : rows) {
    const Result r = run(row.args);
    EXPECT_EQ(r.code, row.code) << row.args << "\n" << r.out;
    EXPECT_THAT(r.out, StartsWith("mixtd: error: ")) << row.args;
    EXPECT_THAT(r.out, HasSubstr(row.text)) << row.args;
    EXPECT_EQ(count_lines(r.out), 1) << row.args << "\n" << r.out;
    EXPECT_THAT(r.out, testing::Not(HasSubstr("internal error"))) << row.args;
    if (!row.must_not_exist.empty()) {
      EXPECT_FALSE(fs::exists(row.must_not_exist)) << row.args;
    }
  }
  // Nothing written over or into the paths that were refused.
  EXPECT_EQ(read_text(s.file), file_before);
  EXPECT_TRUE(fs::is_empty(s.folder));
}

// A deadlock keeps its listing (the blocked FIFOs) and ends with one error line.
TEST(BadInput, DeadlockEndsWithOneErrorLine) {
  const Result r = run("simulate " + scratch().deadlock.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("skip FIFO 'conv1/stage0->add1'"));
  EXPECT_THAT(last_line(r.out), StartsWith("mixtd: error: simulate: deadlock at cycle "));
  EXPECT_THAT(last_line(r.out), HasSubstr("no block can make progress (0 of 3 frames out)"));
  std::size_t errors = 0;
  for (auto at = r.out.find("mixtd: error:"); at != std::string::npos; at = r.out.find("mixtd: error:", at + 1))
    ++errors;
  EXPECT_EQ(errors, 1u) << r.out;
}

// --help is unchanged by the error formatter: printed, exit 0.
TEST(BadInput, HelpStillPrints) {
  const Result r = run("simulate --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("--frames"));
  EXPECT_THAT(r.out, testing::Not(HasSubstr("mixtd: error")));
}

}  // namespace
