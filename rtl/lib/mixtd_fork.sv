// Fork (sc::Routing::Fork): COPIES identical streams of one input — an
// input group to its g1 engines. Each copy has its own handshake; a copy
// held back stalls the input only once the two-pixel buffer is full
// (mixtd_stream_route).
module mixtd_fork #(
    parameter int CHANNELS = 8,
    parameter int COPIES = 2,
    parameter int W_IN = 1,
    parameter int W_OUT = 1
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [0:0] in_valid,
    output logic [0:0] in_ready,
    input  logic [W_IN*8-1:0] in_data,
    output logic [COPIES-1:0] out_valid,
    input  logic [COPIES-1:0] out_ready,
    output logic [COPIES*W_OUT*8-1:0] out_data
);
  mixtd_stream_route #(
      .ROUTING(1),
      .CHANNELS(CHANNELS),
      .GROUPS_IN(1),
      .GROUPS_OUT(1),
      .PORTS_IN(1),
      .PORTS_OUT(COPIES),
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
