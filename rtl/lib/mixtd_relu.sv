// An unfused ReLU (sc::Routing::Relu): max(word, 0) of every int8 mantissa.
// Timing and buffering: mixtd_stream_route.
module mixtd_relu #(
    parameter int CHANNELS = 8,
    parameter int W_IN = 1,
    parameter int W_OUT = 1
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [0:0] in_valid,
    output logic [0:0] in_ready,
    input  logic [W_IN*8-1:0] in_data,
    output logic [0:0] out_valid,
    input  logic [0:0] out_ready,
    output logic [W_OUT*8-1:0] out_data
);
  mixtd_stream_route #(
      .ROUTING(2),
      .CHANNELS(CHANNELS),
      .GROUPS_IN(1),
      .GROUPS_OUT(1),
      .PORTS_IN(1),
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
