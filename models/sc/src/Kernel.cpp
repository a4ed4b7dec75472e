#include "mixtd/sc/Kernel.h"

#include <systemc>

namespace mixtd::sc {

Cycle SimContext::kernel_cycle() const {
  return static_cast<Cycle>(sc_core::sc_time_stamp().to_seconds() * clock_mhz * 1e6 + 0.5);
}

void SimContext::sync(Cycle t) {
  if (t > furthest) furthest = t;
  if (cycle_limit >= 0 && t > cycle_limit && stop_reason.empty()) {
    stop_reason = "cycle limit of " + std::to_string(cycle_limit) + " cycles reached";
    sc_core::sc_stop();
    sc_core::wait();  // never resumed: the simulation is over
  }
  const Cycle now = kernel_cycle();
  if (t - now > quantum) sc_core::wait(sc_core::sc_time(static_cast<double>(t - now) * period_ps(), sc_core::SC_PS));
}

}  // namespace mixtd::sc
