// A bounded stream FIFO of beats with valid/ready handshakes — the RTL twin
// of sc::BeatFifo (models/sc/include/mixtd/sc/BeatFifo.h), with the same
// timing rules so that the two models count the same cycles:
//
//  * fall-through: a beat pushed in cycle t can be popped in cycle t (when
//    the FIFO is empty, in_data goes straight to out_data);
//  * registered ready: in_ready depends only on the occupancy at the start
//    of the cycle, so a slot freed by a pop in cycle t takes a push in
//    cycle t + 1. A FIFO of any DEPTH >= 1 sustains one beat per cycle,
//    and back-pressure reaches the producer when DEPTH beats wait.
//
// A beat is WIDTH bits (p words × word bits, lane 0 in the low bits).
module mixtd_stream_fifo #(
    parameter int WIDTH = 8,
    parameter int DEPTH = 2
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             in_valid,
    output logic             in_ready,
    input  logic [WIDTH-1:0] in_data,
    output logic             out_valid,
    input  logic             out_ready,
    output logic [WIDTH-1:0] out_data
);
  localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;

  logic [WIDTH-1:0] mem[DEPTH];
  logic [AW-1:0] rd_q, wr_q;
  logic [AW:0] count_q;

  wire empty = count_q == 0;
  assign in_ready  = count_q < (AW + 1)'(DEPTH);
  assign out_valid = !empty || in_valid;
  assign out_data  = empty ? in_data : mem[rd_q];

  wire push = in_valid && in_ready;
  wire pop = out_valid && out_ready;
  wire bypass = empty && push && pop;  // straight through, nothing stored
  wire store = push && !bypass;
  wire take = pop && !bypass;

  wire [AW-1:0] rd_next = rd_q == AW'(DEPTH - 1) ? '0 : rd_q + 1'b1;
  wire [AW-1:0] wr_next = wr_q == AW'(DEPTH - 1) ? '0 : wr_q + 1'b1;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rd_q <= '0;
      wr_q <= '0;
      count_q <= '0;
    end else begin
      if (store) begin
        mem[wr_q] <= in_data;
        wr_q <= wr_next;
      end
      if (take) rd_q <= rd_next;
      count_q <= count_q + (AW + 1)'(store) - (AW + 1)'(take);
    end
  end
endmodule
