// Group merge (sc::Routing::Merge), the inverse of mixtd_group_split:
// GROUPS strided group streams into one stream of CHANNELS channels —
// output word c is word c / GROUPS of group c mod GROUPS. Input beats of
// W_IN words per group, output beats of W_OUT words. Timing and buffering:
// mixtd_stream_route.
module mixtd_group_merge #(
    parameter int CHANNELS = 8,
    parameter int GROUPS = 2,
    parameter int W_IN = 1,
    parameter int W_OUT = 1
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [GROUPS-1:0] in_valid,
    output logic [GROUPS-1:0] in_ready,
    input  logic [GROUPS*W_IN*8-1:0] in_data,
    output logic [0:0] out_valid,
    input  logic [0:0] out_ready,
    output logic [W_OUT*8-1:0] out_data
);
  mixtd_stream_route #(
      .ROUTING(0),
      .CHANNELS(CHANNELS),
      .GROUPS_IN(GROUPS),
      .GROUPS_OUT(1),
      .PORTS_IN(GROUPS),
      .PORTS_OUT(1),
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
