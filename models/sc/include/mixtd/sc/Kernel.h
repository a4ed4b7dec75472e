// What every SystemC block of one pipeline shares: the clock, the temporal
// decoupling quantum, the cycle limit and the record of why a run stopped.
//
// Time model (docs/simulation.md). Every beat carries the cycle at which it
// is transferred. A block computes its own cycles from the cycles of what it
// consumes, its structure (the rules of arch/Timing.h) and the cycles at
// which downstream FIFO slots were freed; it never waits on the kernel clock
// for that. The kernel clock only follows behind, within a quantum, the way
// TLM-2.0 loosely-timed initiators use tlm_quantumkeeper: a thread that runs
// more than `quantum` cycles ahead of sc_time_stamp() waits for the kernel to
// catch up. Threads block on the kernel only when a FIFO is really full or
// empty. Because every block is a deterministic function of the cycles of
// its inputs and outputs (a bounded Kahn network in max-plus time), the
// cycles do not depend on the order in which the kernel runs the threads,
// or on the quantum: a quantum of 0 (used for VCD traces) gives the same
// numbers, just slower.
#pragma once

#include <cstdint>
#include <string>

namespace mixtd::sc {

using Cycle = std::int64_t;

struct SimContext {
  double clock_mhz = 200.0;
  Cycle quantum = 20000;    // cycles a thread may run ahead of the kernel
  Cycle cycle_limit = -1;   // < 0: none
  bool data = true;         // carry int8 data (false: timing only)
  std::string stop_reason;  // set when a block stops the run
  Cycle furthest = 0;       // the latest cycle any block reached

  // Called by a thread whose local time is t (inside an SC_THREAD).
  // Waits for the kernel when t is more than `quantum` ahead; stops the
  // simulation when t passes the cycle limit.
  void sync(Cycle t);
  // sc_time_stamp() in cycles.
  Cycle kernel_cycle() const;
  double period_ps() const { return 1e6 / clock_mhz; }
};

}  // namespace mixtd::sc
