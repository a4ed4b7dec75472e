#include "mixtd/sim/Simulate.h"

namespace mixtd::sim {

nlohmann::json to_json(const SimResult& r) {
  nlohmann::json j;
  j["design"] = r.design;
  j["completed"] = r.completed;
  j["error"] = r.error;
  j["blocked"] = r.blocked;
  j["frames"] = r.frames;
  j["latency_cycles"] = r.latency;
  j["interval_cycles"] = r.interval;
  j["clock_mhz"] = r.clock_mhz;
  j["preload_cycles"] = r.preload_cycles;
  j["cycles"] = r.cycles;
  j["fps_batch1"] = r.fps_batch1();
  j["fps_peak"] = r.fps_peak();
  j["analytical"] = {{"interval_cycles", r.analytical_interval}, {"latency_cycles", r.analytical_latency}};
  j["bottleneck"] = r.bottleneck;
  j["functional"] = r.functional;
  j["outputs_match"] = r.outputs_match;
  j["mismatch"] = r.mismatch;
  if (!r.top1.empty()) j["top1"] = r.top1;
  if (!r.golden_top1.empty()) j["golden_top1"] = r.golden_top1;
  if (!r.labels.empty()) j["labels"] = r.labels;
  j["wall_seconds"] = r.wall_seconds;
  j["beats"] = r.beats;
  auto& mods = j["modules"] = nlohmann::json::array();
  for (const auto& m : r.modules)
    mods.push_back({{"name", m.name},
                    {"kind", m.kind},
                    {"layer", m.layer},
                    {"count", m.count},
                    {"busy", m.busy},
                    {"stall_in", m.stall_in},
                    {"stall_out", m.stall_out},
                    {"idle", m.idle},
                    {"analytical_interval", m.analytical_interval}});
  auto& fifos = j["fifos"] = nlohmann::json::array();
  for (const auto& f : r.fifos)
    fifos.push_back({{"name", f.name},
                     {"count", f.count},
                     {"depth", f.depth},
                     {"width", f.width},
                     {"high_water", f.high_water},
                     {"skip", f.skip}});
  j["first_input_cycle"] = r.first_input_cycle;
  if (!r.streams.empty()) {
    auto& streams = j["streams"] = nlohmann::json::array();
    for (const auto& st : r.streams)
      streams.push_back({{"name", st.name}, {"width", st.width}, {"words", st.words}, {"cycles", st.cycles}});
  }
  return j;
}

SimResult result_from_json(const nlohmann::json& j) {
  SimResult r;
  r.design = j.at("design").get<std::string>();
  r.completed = j.at("completed").get<bool>();
  r.error = j.at("error").get<std::string>();
  r.blocked = j.at("blocked").get<std::vector<std::string>>();
  r.frames = j.at("frames").get<std::int64_t>();
  r.latency = j.at("latency_cycles").get<std::vector<std::int64_t>>();
  r.interval = j.at("interval_cycles").get<std::int64_t>();
  r.clock_mhz = j.at("clock_mhz").get<double>();
  r.preload_cycles = j.at("preload_cycles").get<std::int64_t>();
  r.cycles = j.at("cycles").get<std::int64_t>();
  r.analytical_interval = j.at("analytical").at("interval_cycles").get<std::int64_t>();
  r.analytical_latency = j.at("analytical").at("latency_cycles").get<std::int64_t>();
  r.bottleneck = j.at("bottleneck").get<std::string>();
  r.functional = j.at("functional").get<bool>();
  r.outputs_match = j.at("outputs_match").get<bool>();
  r.mismatch = j.at("mismatch").get<std::string>();
  if (j.contains("top1")) r.top1 = j.at("top1").get<std::vector<std::int64_t>>();
  if (j.contains("golden_top1")) r.golden_top1 = j.at("golden_top1").get<std::vector<std::int64_t>>();
  if (j.contains("labels")) r.labels = j.at("labels").get<std::vector<std::int64_t>>();
  r.wall_seconds = j.at("wall_seconds").get<double>();
  r.beats = j.at("beats").get<std::int64_t>();
  for (const auto& m : j.at("modules"))
    r.modules.push_back({m.at("name"), m.at("kind"), m.at("layer"), m.at("count"), m.at("busy"), m.at("stall_in"),
                         m.at("stall_out"), m.at("idle"), m.at("analytical_interval")});
  for (const auto& f : j.at("fifos"))
    r.fifos.push_back({f.at("name"), f.at("count"), f.at("depth"), f.at("width"), f.at("high_water"), f.at("skip")});
  r.first_input_cycle = j.value("first_input_cycle", std::int64_t{0});
  if (j.contains("streams"))
    for (const auto& st : j.at("streams"))
      r.streams.push_back({st.at("name"), st.at("width"), st.at("words").get<std::vector<std::int8_t>>(),
                           st.at("cycles").get<std::vector<std::int64_t>>()});
  return r;
}

}  // namespace mixtd::sim
