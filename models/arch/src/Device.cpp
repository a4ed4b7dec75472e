#include "mixtd/arch/Device.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "mixtd/net/YamlKeys.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::arch {

namespace fs = std::filesystem;

double Resources::max_utilisation(const Resources& b) const {
  auto ratio = [](double used, double avail) {
    if (used <= 0) return 0.0;
    return avail > 0 ? used / avail : std::numeric_limits<double>::infinity();
  };
  return std::max(
      {ratio(dsp, b.dsp), ratio(bram18, b.bram18), ratio(uram, b.uram), ratio(lut, b.lut), ratio(ff, b.ff)});
}

std::string Resources::binding(const Resources& b) const {
  const double m = max_utilisation(b);
  auto is = [&](double used, double avail) {
    return used > 0 && (avail > 0 ? used / avail : std::numeric_limits<double>::infinity()) >= m;
  };
  if (is(dsp, b.dsp)) return "DSP";
  if (is(bram18, b.bram18)) return "BRAM18";
  if (is(uram, b.uram)) return "URAM";
  if (is(lut, b.lut)) return "LUT";
  if (is(ff, b.ff)) return "FF";
  return "none";
}

std::string clock_range() { return "1 .. 1000 MHz"; }

double memory_bits(const Device& d) { return d.capacity.bram18 * 18432.0 + d.capacity.uram * 294912.0; }

fs::path configs_dir() {
  if (const char* env = std::getenv("MIXTD_CONFIGS"); env && *env) return env;
  return MIXTD_DEFAULT_CONFIGS_DIR;
}

std::vector<std::string> device_names() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(configs_dir() / "devices", ec))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

Device parse_device(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
  }
  auto at = [&](const YAML::Node& n) {
    return source + ":" + (n.Mark().line >= 0 ? std::to_string(n.Mark().line + 1) : std::string("1")) + ": ";
  };
  require(root.IsMap(), source + ":1: a device file is a mapping (name, part, resources, clock_mhz, ...)");
  refuse_duplicate_keys(root, source);
  auto number = [&](const YAML::Node& parent, const char* key, const std::string& where) {
    const YAML::Node n = parent[key];
    if (!n) throw Error(at(parent) + "device file is missing '" + where + key + "'");
    try {
      const double v = n.as<double>();
      if (!std::isfinite(v)) throw Error(at(n) + "'" + where + key + "' must be a finite number, got " + n.Scalar());
      if (v < 0) throw Error(at(n) + "'" + where + key + "' must be non-negative, got " + n.Scalar());
      return v;
    } catch (const YAML::Exception&) {
      throw Error(at(n) + "'" + where + key + "' must be a number, got '" + (n.IsScalar() ? n.Scalar() : "?") + "'");
    }
  };
  // name, part, family: words; a list or mapping there is refused by name.
  auto word = [&](const char* key) {
    const YAML::Node n = root[key];
    if (!n.IsScalar()) throw Error(at(n) + "'" + key + "' must be a word, not a list or mapping");
    return n.Scalar();
  };
  Device d;
  if (!root["name"]) throw Error(source + ":1: device file is missing 'name'");
  d.name = word("name");
  d.part = root["part"] ? word("part") : "";
  d.family = root["family"] ? word("family") : "xcup";
  const YAML::Node r = root["resources"];
  if (!r || !r.IsMap()) throw Error(source + ":1: device file is missing 'resources' (dsp, bram18, uram, lut, ff)");
  d.capacity.dsp = number(r, "dsp", "resources.");
  d.capacity.bram18 = number(r, "bram18", "resources.");
  d.capacity.uram = number(r, "uram", "resources.");
  d.capacity.lut = number(r, "lut", "resources.");
  d.capacity.ff = number(r, "ff", "resources.");
  d.clock_mhz = number(root, "clock_mhz", "");
  if (!(d.clock_mhz >= kMinClockMhz && d.clock_mhz <= kMaxClockMhz))
    throw Error(at(root["clock_mhz"]) + "'clock_mhz' = " + root["clock_mhz"].Scalar() + ": legal " + clock_range());
  d.host_words_per_cycle = root["host_words_per_cycle"] ? number(root, "host_words_per_cycle", "") : 64.0;
  require(d.host_words_per_cycle > 0, source + ": 'host_words_per_cycle' must be positive");
  return d;
}

Device load_device(const std::string& spec) {
  fs::path p(spec);
  if (p.extension() != ".yaml" && p.extension() != ".yml") {
    p = configs_dir() / "devices" / (spec + ".yaml");
    std::error_code ec;  // a name too long for the file system is unknown too, not an exception
    if (!fs::exists(p, ec)) {
      std::string names;
      for (const auto& n : device_names()) names += (names.empty() ? "" : ", ") + n;
      throw Error("unknown device '" + spec + "' (known: " + names + "; or give a .yaml file)");
    }
  }
  return parse_device(read_file(p), p.string());
}

}  // namespace mixtd::arch
