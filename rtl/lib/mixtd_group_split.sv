// Group split (sc::Routing::Split): one stream of CHANNELS channels into
// GROUPS strided group streams — channel c goes to group c mod GROUPS as
// its word c / GROUPS. Input beats of W_IN words, output beats of W_OUT
// words per group. Timing and buffering: mixtd_stream_route.
module mixtd_group_split #(
    parameter int CHANNELS = 8,
    parameter int GROUPS = 2,
    parameter int W_IN = 1,
    parameter int W_OUT = 1
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [0:0] in_valid,
    output logic [0:0] in_ready,
    input  logic [W_IN*8-1:0] in_data,
    output logic [GROUPS-1:0] out_valid,
    input  logic [GROUPS-1:0] out_ready,
    output logic [GROUPS*W_OUT*8-1:0] out_data
);
  mixtd_stream_route #(
      .ROUTING(0),
      .CHANNELS(CHANNELS),
      .GROUPS_IN(1),
      .GROUPS_OUT(GROUPS),
      .PORTS_IN(1),
      .PORTS_OUT(GROUPS),
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
