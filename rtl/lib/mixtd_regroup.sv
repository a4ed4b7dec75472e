// Regrouping between layers whose groups differ (sc::Routing::Regroup): the
// word routing of the round-robin FIFO array of SPEC "The accelerator" (paper
// §IV-C) — G_IN strided group streams in, G_OUT out; output group k word i
// is channel c = k + i*G_OUT, taken from input group c mod G_IN, word
// c / G_IN. Like the SystemC model, the lcm(G_IN, G_OUT) FIFOs written and
// read round-robin are modelled by this routing and mixtd_stream_route's
// two-pixel buffer. CHANNELS counts all groups.
module mixtd_regroup #(
    parameter int CHANNELS = 12,
    parameter int G_IN = 2,
    parameter int G_OUT = 3,
    parameter int W_IN = 1,
    parameter int W_OUT = 1
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [G_IN-1:0] in_valid,
    output logic [G_IN-1:0] in_ready,
    input  logic [G_IN*W_IN*8-1:0] in_data,
    output logic [G_OUT-1:0] out_valid,
    input  logic [G_OUT-1:0] out_ready,
    output logic [G_OUT*W_OUT*8-1:0] out_data
);
  mixtd_stream_route #(
      .ROUTING(0),
      .CHANNELS(CHANNELS),
      .GROUPS_IN(G_IN),
      .GROUPS_OUT(G_OUT),
      .PORTS_IN(G_IN),
      .PORTS_OUT(G_OUT),
      .W_IN(W_IN),
      .W_OUT(W_OUT)
  ) route (
      .clk,
      .rst_n,
      .in_valid,
      .in_ready,
      .in_data,
      .out_valid,
      .out_ready,
      .out_data
  );
endmodule
