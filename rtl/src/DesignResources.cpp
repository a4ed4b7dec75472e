#include "mixtd/rtl/DesignResources.h"

#include "mixtd/arch/Graph.h"
#include "mixtd/arch/Resources.h"
#include "mixtd/rtl/Generator.h"

namespace mixtd::rtl {

namespace {

// The rtl/lib module the generator instantiates for a graph module ("" for
// the host ports, which are wires of the top).
std::string rtl_module(const arch::Module& m) {
  using K = arch::ModuleKind;
  switch (m.kind) {
    case K::HostIn:
    case K::HostOut:
      return "";
    case K::Stage:
      return "mixtd_conv_stage";
    case K::MaxPool:
    case K::AvgPool:
      return "mixtd_pool";
    case K::GlobalAvgPool:
      return "mixtd_global_avg_pool";
    case K::Split:
      return "mixtd_group_split";
    case K::Merge:
      return "mixtd_group_merge";
    case K::RoundRobin:
      return "mixtd_regroup";
    case K::Fork:
      return "mixtd_fork";
    case K::ReLU:
      return "mixtd_relu";
    case K::GroupAdd:
      return "mixtd_group_add";
    case K::EltwiseAdd:
      return "mixtd_eltwise_add";
  }
  return "";
}

std::string kind_of(const arch::Module& m) {
  if (m.kind == arch::ModuleKind::Stage)
    return std::string(
        arch::logic_block_name(m.shape.depthwise ? arch::LogicBlock::DepthwiseStage : arch::LogicBlock::Stage));
  return std::string(arch::logic_block_name(arch::stream_module_logic(m, m.width_in, m.width_out).block));
}

nlohmann::json resources_json(const arch::Resources& r) {
  return {{"dsp", r.dsp}, {"bram18", r.bram18}, {"uram", r.uram}, {"lut", r.lut}, {"ff", r.ff}};
}

}  // namespace

DesignResources design_resources(const arch::Design& d) {
  const arch::Report report = arch::analyse(d);
  const arch::Graph& g = report.graph;
  DesignResources out;
  out.design = d.name;
  out.total = report.total;
  for (const auto& m : g.modules) {
    DesignResourceRow r;
    r.name = m.name;
    r.kind = kind_of(m);
    r.module = rtl_module(m);
    r.count = m.count;
    if (!r.module.empty())
      for (std::int64_t i = 0; i < m.count; ++i) r.instances.push_back(instance_name(m, i));
    r.per_instance = m.resources;
    r.total = m.resources.scaled(static_cast<double>(m.count));
    out.rows.push_back(std::move(r));
  }
  for (std::size_t si = 0; si < g.streams.size(); ++si) {
    const arch::Stream& s = g.streams[si];
    DesignResourceRow r;
    r.name = s.name;
    r.kind = std::string(arch::logic_block_name(arch::LogicBlock::Fifo));
    r.module = "mixtd_stream_fifo";
    r.count = s.count;
    for (std::int64_t e = 0; e < s.count; ++e) r.instances.push_back(fifo_name(si, e));
    // The stream's resources are its FIFOs and repacks: the FIFOs' row is
    // the FIFO alone, the repacks' row (below) the rest.
    r.per_instance = arch::fifo_resources(s.depth, s.width, d.bits);
    r.total = r.per_instance.scaled(static_cast<double>(s.count));
    out.rows.push_back(std::move(r));
  }
  for (std::size_t si = 0; si < g.streams.size(); ++si) {
    const arch::Stream& s = g.streams[si];
    if (!needs_repack(g, s)) continue;
    DesignResourceRow r;
    r.name = s.name + " (repack)";
    r.kind = "repack";
    r.module = "mixtd_repack";
    r.count = s.count;
    for (std::int64_t e = 0; e < s.count; ++e) r.instances.push_back(repack_name(si, e));
    r.per_instance =
        arch::repack_resources(s.width, arch::consumer_read_width(g.modules[static_cast<std::size_t>(s.to)]));
    r.total = r.per_instance.scaled(static_cast<double>(s.count));
    out.rows.push_back(std::move(r));
  }
  return out;
}

nlohmann::json to_json(const DesignResources& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"name", row.name},
                    {"kind", row.kind},
                    {"module", row.module},
                    {"count", row.count},
                    {"instances", row.instances},
                    {"per_instance", resources_json(row.per_instance)},
                    {"total", resources_json(row.total)}});
  return {{"design", r.design}, {"total", resources_json(r.total)}, {"rows", rows}};
}

}  // namespace mixtd::rtl
