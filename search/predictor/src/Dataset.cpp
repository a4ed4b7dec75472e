#include "mixtd/search/Dataset.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "mixtd/net/Load.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/search/Solver.h"
#include "mixtd/sim/JobBackend.h"
#include "mixtd/sim/Simulate.h"
#include "mixtd/support/Csv.h"
#include "mixtd/support/Error.h"
#include "mixtd/td/Candidates.h"

namespace mixtd::search {

namespace {

constexpr const char* kMagic = "# mixtd dataset v1";

bool is_conv(const net::Layer& l) { return l.kind == net::LayerKind::Conv2d; }

double layer_macs(const arch::Design& d, const net::Layer& l, const td::Tau& tau) {
  arch::Design t = d;
  t.layers.at(l.name).tau = tau;
  return static_cast<double>(t.geometry(l).macs());
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// A status is one CSV field: no commas, quotes or line breaks.
std::string field(std::string s) {
  for (char& c : s)
    if (c == ',' || c == '\n' || c == '\r' || c == '"') c = ' ';
  return s;
}

std::vector<std::string> split(const std::string& line) { return split_csv_line(line); }

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

std::string first_line(const std::string& spec, const std::string& device, const DatasetOptions& o) {
  const SamplerOptions& s = o.sampler;
  return std::string(kMagic) + " network=" + spec + " device=" + device + " seed=" + std::to_string(o.seed) +
         " frames=" + std::to_string(o.frames) + " mac_ratio=" + number(s.mac_ratio) +
         " mac_sigma=" + number(s.mac_sigma) + " spread=" + number(s.spread) +
         " undecomposed=" + number(s.undecomposed) + " max_chunks=" + std::to_string(s.max_chunks);
}

std::uint64_t design_seed(std::uint64_t seed, std::int64_t index) {
  std::uint64_t s = seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(index + 1));
  return splitmix64(s);
}

// One write(2) per row, then fsync: a kill leaves at most a torn last line.
void append(int fd, const std::string& text, const std::filesystem::path& csv) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) throw Error(csv.string() + ": write failed");
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) throw Error(csv.string() + ": fsync failed");
}

// Checks an existing file against what this run would write, drops a torn
// last line, and returns how many rows it holds.
std::int64_t resume_point(const std::filesystem::path& csv, const std::string& line1, const std::string& header) {
  std::string text;
  {
    std::ifstream in(csv, std::ios::binary);
    if (!in) throw Error(csv.string() + ": cannot read");
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  const std::size_t end = text.rfind('\n');
  if (end == std::string::npos || end + 1 != text.size()) {
    // A torn last line (killed mid-write): cut it.
    const std::size_t keep = end == std::string::npos ? 0 : end + 1;
    std::filesystem::resize_file(csv, keep);
    text.resize(keep);
  }
  std::istringstream in(text);
  std::string l;
  if (!std::getline(in, l) || l != line1)
    throw Error(csv.string() + ":1: this file was generated with other settings:\n  found:    " + l +
                "\n  expected: " + line1 + "\n(use another -o, or the same options as before to resume)");
  if (!std::getline(in, l) || l != header)
    throw Error(csv.string() + ":2: the column header does not match this network's features");
  std::int64_t rows = 0;
  while (std::getline(in, l)) {
    const auto f = split(l);
    if (f.empty() || f[0] != std::to_string(rows))
      throw Error(csv.string() + ":" + std::to_string(rows + 3) + ": expected row index " + std::to_string(rows) +
                  ", found '" + (f.empty() ? "" : f[0]) + "'");
    ++rows;
  }
  return rows;
}

// The `key=` value of a dataset's first line ("" if absent).
std::string setting(const std::string& line1, const std::string& key) {
  const std::string k = " " + key + "=";
  const std::size_t at = line1.find(k);
  if (at == std::string::npos) return "";
  const std::size_t from = at + k.size();
  return line1.substr(from, line1.find(' ', from) - from);
}

// The network a dataset says it was made for, if it can be found: a zoo
// spec, or a network file as given or beside the CSV.
std::optional<net::Network> network_of(const std::string& spec, const std::filesystem::path& csv) {
  if (spec.empty()) return std::nullopt;
  try {
    if (net::is_zoo_spec(spec)) return net::load_network(spec, false);
    const std::filesystem::path p(spec);
    std::error_code ec;  // a name the file system refuses (too long) is not found, not an exception
    for (const auto& c : {p, csv.parent_path() / p})
      if (std::filesystem::is_regular_file(c, ec)) return net::load_network(c.string(), false);
  } catch (const Error&) {
  }
  return std::nullopt;
}

// The per-layer feature columns (feature_names' first part) of `net`.
std::vector<std::string> layer_feature_names(const net::Network& net) {
  std::vector<std::string> n;
  for (const auto& l : net.layers)
    if (is_conv(l))
      for (const char* s : {".t", ".g1", ".g2", ".r"}) n.push_back(l.name + s);
  return n;
}

bool is_layer_feature(const std::string& c) {
  for (const char* s : {".t", ".g1", ".g2", ".r"})
    if (c.ends_with(s)) return true;
  return false;
}

}  // namespace

arch::Design sample_tau(const arch::Design& base, Rng& rng, const SamplerOptions& o) {
  arch::Design d = base;
  const double target = std::clamp(o.mac_ratio + o.mac_sigma * rng.normal(), 0.05, 1.0);
  td::CandidateOptions co;
  co.groups = td::GroupPolicy::All;
  co.max_chunks = o.max_chunks;
  for (const auto& l : d.network.layers) {
    if (!is_conv(l)) continue;
    arch::LayerMapping& m = d.layers.at(l.name);
    m.tau = td::Tau{};
    if (td::is_decomposable(l) && rng.uniform() >= o.undecomposed) {
      const auto cands = td::layer_candidates(l, co);
      const double full = layer_macs(base, l, td::Tau{});
      std::vector<double> w;
      double total = 0;
      for (const auto& c : cands) {
        const double r = c.decomposed() ? layer_macs(base, l, c) / full : 1.0;
        const double x = (r - target) / o.spread;
        w.push_back(c.decomposed() ? std::exp(-0.5 * x * x) : 0.0);
        total += w.back();
      }
      if (total > 0) {
        double u = rng.uniform() * total;
        for (std::size_t k = 0; k < cands.size(); ++k) {
          u -= w[k];
          if (u < 0 || k + 1 == cands.size()) {
            m.tau = cands[k];
            break;
          }
        }
      }
    }
    m.stages.assign(d.geometry(l).stages.size(), arch::Psi{});
  }
  return d;
}

std::vector<std::string> feature_names(const arch::Design& d) {
  std::vector<std::string> n;
  for (const auto& l : d.network.layers)
    if (is_conv(l))
      for (const char* s : {".t", ".g1", ".g2", ".r"}) n.push_back(l.name + s);
  for (const char* s :
       {"macs", "params", "interval", "fill", "latency", "fps_batch1", "fps_peak", "dsp", "bram18", "uram"})
    n.push_back(s);
  return n;
}

std::vector<double> features(const arch::Design& d, const arch::Report& r) {
  std::vector<double> v;
  double macs = 0, params = 0;
  for (const auto& l : d.network.layers) {
    if (is_conv(l)) {
      const td::Tau& t = d.layers.at(l.name).tau;
      v.insert(v.end(), {static_cast<double>(t.type), static_cast<double>(t.g1), static_cast<double>(t.g2),
                         static_cast<double>(t.rank)});
    }
    if (auto it = d.layers.find(l.name); it != d.layers.end()) {
      const auto g = d.geometry(l);
      macs += static_cast<double>(g.macs());
      params += static_cast<double>(g.params());
    }
  }
  v.insert(v.end(), {macs, params, static_cast<double>(r.interval), static_cast<double>(r.fill_cycles),
                     static_cast<double>(r.latency_cycles(1)), r.fps_batch1(), r.fps_peak(), r.total.dsp,
                     r.total.bram18, r.total.uram});
  return v;
}

namespace {

constexpr const char* kLabelJob = "label-design";
constexpr std::int64_t kJobsPerSlot = 8;

// One row of the file: design `index` drawn from its seed, solved, analysed
// and simulated, all in the job's own child process.
std::string label_design(const std::string& payload) {
  const auto j = nlohmann::json::parse(payload);
  const arch::Design base = sim::design_from_job(j);
  SamplerOptions so;
  const auto& s = j.at("sampler");
  so.mac_ratio = s.at("mac_ratio").get<double>();
  so.mac_sigma = s.at("mac_sigma").get<double>();
  so.spread = s.at("spread").get<double>();
  so.undecomposed = s.at("undecomposed").get<double>();
  so.max_chunks = s.at("max_chunks").get<std::int64_t>();
  const std::int64_t index = j.at("index").get<std::int64_t>();
  const std::uint64_t seed = j.at("seed").get<std::uint64_t>();
  std::vector<std::string> row = {std::to_string(index), std::to_string(seed)};
  const std::size_t width = 3 + feature_names(base).size() + target_names().size();

  Rng rng(seed);
  arch::Design d = sample_tau(base, rng, so);
  d.name = j.at("spec").get<std::string>() + " #" + std::to_string(index);
  try {
    d = solve(d).design;
  } catch (const Error& e) {
    row.push_back("infeasible: " + field(e.what()));
    row.resize(width);
    return join(row);
  }
  const arch::Report report = arch::analyse(d);
  sim::SimOptions sim_options;
  sim_options.frames = j.at("frames").get<std::int64_t>();
  const sim::SimResult r = sim::simulate(d, sim_options);
  std::string status;
  if (!r.completed) status = "failed: " + field(r.error.substr(0, r.error.find('\n')));
  if (r.completed && r.interval <= 0) status = "failed: no interval";
  if (!status.empty()) {
    row.push_back(status);
    row.resize(width);
    return join(row);
  }
  row.push_back("ok");
  for (double v : features(d, report)) row.push_back(number(v));
  for (double v :
       {static_cast<double>(r.interval), static_cast<double>(r.latency.front()), r.fps_batch1(), r.fps_peak()})
    row.push_back(number(v));
  return join(row);
}

// Registered while this translation unit initialises: a program that can
// generate a dataset can serve its jobs on every rank.
const bool kLabelRegistered = (sim::register_job_kind(kLabelJob, &label_design), true);

}  // namespace

std::int64_t generate_dataset(const arch::Design& base, const std::string& spec, const std::string& device,
                              const std::filesystem::path& csv, const DatasetOptions& o,
                              const std::function<void(const Progress&)>& progress) {
  require(o.designs >= 0, "dataset: the number of designs must be at least 0, got " + std::to_string(o.designs));
  require(o.frames >= 2, "dataset: at least 2 frames are needed for an interval, got " + std::to_string(o.frames));
  const std::string line1 = first_line(spec, device, o);
  std::vector<std::string> cols = {"index", "seed", "status"};
  for (const auto& n : feature_names(base)) cols.push_back(n);
  for (const auto& n : target_names()) cols.push_back(n);
  const std::string header = join(cols);
  (void)kLabelRegistered;

  std::int64_t done = 0;
  if (std::filesystem::exists(csv)) {
    done = resume_point(csv, line1, header);
  } else {
    // Header first, atomically: a file that exists always has both lines.
    const std::filesystem::path tmp = csv.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw Error(csv.string() + ": cannot create");
      out << line1 << '\n' << header << '\n';
      out.flush();
      if (!out) throw Error(csv.string() + ": write failed");
    }
    std::filesystem::rename(tmp, csv);
  }
  const int fd = ::open(csv.c_str(), O_WRONLY | O_APPEND);
  if (fd < 0) throw Error(csv.string() + ": cannot open for appending");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};

  // One job per row (sample τ, solve ψ, analyse, simulate: "label-design"),
  // on whichever back end runs jobs (forked children, or MPI workers), in
  // batches of kJobsPerSlot jobs per job that runs at once: within a batch
  // the next job goes to whichever slot frees first; at its end the slots
  // wait for the batch's slowest design, which a longer batch makes a
  // smaller share. A row depends only on (seed, index), so the batch size
  // changes nothing in the file.
  sim::JobBackend& backend = sim::job_backend();
  const int slots = backend.slots(o.jobs);
  nlohmann::json job = sim::design_to_job(base);
  job["spec"] = spec;
  job["frames"] = o.frames;
  job["sampler"] = {{"mac_ratio", o.sampler.mac_ratio},
                    {"mac_sigma", o.sampler.mac_sigma},
                    {"spread", o.sampler.spread},
                    {"undecomposed", o.sampler.undecomposed},
                    {"max_chunks", o.sampler.max_chunks}};
  sim::PoolOptions po;
  po.jobs = o.jobs;
  po.timeout_s = o.timeout_s;
  const auto t0 = std::chrono::steady_clock::now();
  Progress p{done, o.designs, 0, 0};
  std::int64_t written = 0;
  if (progress) progress(p);
  for (std::int64_t start = done; start < o.designs;) {
    const std::int64_t count = std::min<std::int64_t>(kJobsPerSlot * slots, o.designs - start);
    std::vector<std::string> payloads;
    for (std::int64_t k = 0; k < count; ++k) {
      job["index"] = start + k;
      job["seed"] = design_seed(o.seed, start + k);
      payloads.push_back(job.dump());
    }
    // Rows go to the file as soon as every row before them is done (one
    // write each), so a kill loses only the jobs in flight.
    std::vector<std::optional<std::string>> rows(static_cast<std::size_t>(count));
    std::int64_t next = 0;
    po.on_done = [&](const sim::JobResult& r, std::size_t, std::size_t) {
      const auto k = static_cast<std::int64_t>(r.index);
      std::string row = r.output;
      if (!r.ok()) {
        // The child died or timed out: the row says so, as a simulation that
        // failed inside the child does.
        const std::string why = std::string("simulation ") + sim::to_string(r.status) + ": " + r.error;
        std::vector<std::string> cells = {std::to_string(start + k), std::to_string(design_seed(o.seed, start + k)),
                                          "failed: " + field(why.substr(0, why.find('\n')))};
        cells.resize(cols.size());
        row = join(cells);
      }
      rows[r.index] = std::move(row);
      std::string text;
      for (; next < count && rows[static_cast<std::size_t>(next)]; ++next) {
        const std::string& ready = *rows[static_cast<std::size_t>(next)];
        if (split(ready).at(2) != "ok") ++p.failed;
        text += ready + '\n';
      }
      if (!text.empty()) append(fd, text, csv);
    };
    backend.run(kLabelJob, payloads, po);
    written += count;
    start += count;
    p.done = start;
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(p);
  }
  return written;
}

int Dataset::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

Dataset read_dataset(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  if (!in) throw Error(csv.string() + ": cannot read");
  const std::string where = csv.string() + ":";
  std::string l;
  if (!std::getline(in, l) || l.rfind(kMagic, 0) != 0)
    throw Error(where + "1: not a mixtd dataset (the first line must start with '" + kMagic +
                "'; write one with `mixtd dataset generate`)");
  const std::string l1 = l;
  if (!std::getline(in, l)) throw Error(where + "2: no column header");
  const auto header = split(l);
  if (header.size() < 3 || header[0] != "index" || header[2] != "status")
    throw Error(where + "2: the header must start with 'index,seed,status'");
  for (const auto& t : target_names())
    if (std::find(header.begin(), header.end(), t) == header.end())
      throw Error(where + "2: missing column '" + t + "'");
  Dataset ds;
  ds.source = csv.string();
  ds.network = setting(l1, "network");
  if (const auto net = network_of(ds.network, csv)) {
    // The per-layer columns come first, after index, seed, status.
    const auto want = layer_feature_names(*net);
    std::vector<std::string> have;
    for (std::size_t c = 3; c < header.size() && is_layer_feature(header[c]); ++c) have.push_back(header[c]);
    const auto diff = std::mismatch(want.begin(), want.end(), have.begin(), have.end());
    if (diff.first != want.end() || diff.second != have.end())
      throw Error(where + "2: the first line says network=" + ds.network + ", but column " +
                  std::to_string(4 + (diff.second - have.begin())) + " is " +
                  (diff.second == have.end() ? std::string("not a layer's") : "'" + *diff.second + "'") + " where " +
                  ds.network + " has " +
                  (diff.first == want.end() ? std::string("no more conv layers") : "'" + *diff.first + "'") +
                  " (a file edited, or written for another network)");
  }
  for (std::size_t c = 0; c < header.size(); ++c)
    if (c != 2) ds.columns.push_back(header[c]);
  // Every later step divides by these: an "ok" row must have them above 0.
  std::vector<std::size_t> positive;
  for (std::size_t c = 3; c < header.size(); ++c)
    if (header[c].rfind("sim_", 0) == 0 || header[c] == "fps_batch1" || header[c] == "macs") positive.push_back(c);
  std::int64_t line = 2;
  while (std::getline(in, l)) {
    ++line;
    if (l.empty()) continue;
    const auto f = split(l);
    if (f.size() != header.size())
      throw Error(where + std::to_string(line) + ": " + std::to_string(f.size()) + " fields, the header has " +
                  std::to_string(header.size()));
    if (f[2] != "ok") {
      ++ds.skipped;
      continue;
    }
    std::vector<double> row;
    row.reserve(ds.columns.size());
    for (std::size_t c = 0; c < f.size(); ++c) {
      if (c == 2) continue;
      char* endp = nullptr;
      const double v = std::strtod(f[c].c_str(), &endp);
      if (f[c].empty() || *endp != '\0' || !std::isfinite(v))
        throw Error(where + std::to_string(line) + ": column '" + header[c] + "': '" + f[c] +
                    "' is not a finite number");
      if (v <= 0 && std::find(positive.begin(), positive.end(), c) != positive.end())
        throw Error(where + std::to_string(line) + ": column '" + header[c] + "' = " + f[c] +
                    " in an 'ok' row (index " + f[0] +
                    "): it must be above 0 (a failed simulation's row says "
                    "'failed: ...' and is skipped)");
      row.push_back(v);
    }
    ds.rows.push_back(std::move(row));
  }
  return ds;
}

}  // namespace mixtd::search
