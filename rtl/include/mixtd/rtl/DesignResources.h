// The analytical model's resources of a design, block by block as the
// generated RTL instantiates them (`mixtd resources model`, read by
// `scripts/yosys-sweep --design`; docs/rtl-resources.md "A whole design
// through yosys"):
//
//  * one row per graph module (arch::build_graph's `resources`, one
//    instance, times its count), its instances named as mixtd_top.sv names
//    them (Generator.h instance_name); host in/out have no RTL instance;
//  * one row per graph stream: its `count` mixtd_stream_fifo instances
//    (the FIFOs of the stream's `resources`), q<stream>_<e>;
//  * one row per stream whose consumer reads another width: its
//    mixtd_repack instances (arch::repack_resources).
//
// The rows' totals sum to analyse()'s `total`.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Design.h"

namespace mixtd::rtl {

struct DesignResourceRow {
  std::string name;                    // graph module or stream name
  std::string kind;                    // a logic block (logic_block_name), or "fifo", "repack", "host"
  std::string module;                  // the rtl/lib module; "" where the RTL has none (host)
  std::int64_t count = 1;              // instances
  std::vector<std::string> instances;  // their names in mixtd_top.sv (count of them, or none)
  arch::Resources per_instance;        // the model's, one instance
  arch::Resources total;               // all instances
};

struct DesignResources {
  std::string design;
  std::vector<DesignResourceRow> rows;  // modules in graph order, then streams, then repacks
  arch::Resources total;                // analyse(d).total
};

// The rows of `d` (validated and analysed: throws as analyse() does).
DesignResources design_resources(const arch::Design& d);

// {"design", "total": {dsp, bram18, uram, lut, ff}, "rows": [{name, kind,
// module, count, instances, per_instance, total}]}.
nlohmann::json to_json(const DesignResources& r);

}  // namespace mixtd::rtl
