// Test bench top for the streaming blocks (tests/rtl/test_rtl_stream_grid.cpp):
// one block of rtl/lib, chosen by KIND, with a depth-2 mixtd_stream_fifo on
// every input and output port, as sim::run_stream_block puts the SystemC
// StreamBlock / GlobalAvgPool between BeatFifos. An input FIFO FW_IN words
// wide feeds a block reading W_IN words through a mixtd_repack (the RTL of
// sc::InPort's re-packing), as the generator wires it.
//
// KIND: 0 group split, 1 group merge, 2 regroup, 3 fork, 4 group add,
// 5 eltwise add, 6 relu, 7 global average pool (sim::StreamBlockSpec::Kind).
// Ports: up to 4 inputs and 8 outputs, 64-bit data lanes (the low W·8 bits
// used); ports beyond P_IN / P_OUT are idle. `cfg` reports the parameters.
// E0..E3: the eltwise add's input exponents; BIAS, SHIFT, RELU its
// requantiser.
// verilator lint_off UNUSEDPARAM
module tb_stream_block #(
    parameter int KIND = 3,
    parameter int CHANNELS = 8, PIXELS = 4,
    parameter int G_IN = 1, G_OUT = 1, P_IN = 1, P_OUT = 1,
    parameter int W_IN = 1, W_OUT = 1, FW_IN = 1,
    parameter int E0 = 0, E1 = 0, E2 = 0, E3 = 0,
    parameter int BIAS = 0, SHIFT = 0, RELU = 0,
    parameter REQUANT_FILE = ""
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        in_valid[4],
    output logic        in_ready[4],
    input  logic [63:0] in_data [4],
    output logic        out_valid[8],
    input  logic        out_ready[8],
    output logic [63:0] out_data [8],
    output logic [31:0] cfg[16]
);
  // verilator lint_on UNUSEDPARAM
  localparam logic [31:0] EXPS_ALL = {E3[7:0], E2[7:0], E1[7:0], E0[7:0]};
  assign cfg = '{KIND, CHANNELS, PIXELS, G_IN, G_OUT, P_IN, P_OUT, W_IN, W_OUT, FW_IN, EXPS_ALL, BIAS, SHIFT, RELU,
                 0, 0};

  logic [P_IN-1:0] b_in_valid, b_in_ready;
  logic [P_IN*W_IN*8-1:0] b_in_data;
  logic [P_OUT-1:0] b_out_valid, b_out_ready;
  logic [P_OUT*W_OUT*8-1:0] b_out_data;

  for (genvar q = 0; q < 4; ++q) begin : g_in
    if (q < P_IN) begin : g_used
      logic f_valid, f_ready;
      logic [FW_IN*8-1:0] f_data;
      mixtd_stream_fifo #(.WIDTH(FW_IN * 8), .DEPTH(2)) fifo (
          .clk, .rst_n, .in_valid(in_valid[q]), .in_ready(in_ready[q]), .in_data(in_data[q][FW_IN*8-1:0]),
          .out_valid(f_valid), .out_ready(f_ready), .out_data(f_data)
      );
      if (FW_IN == W_IN) begin : g_direct
        assign b_in_valid[q] = f_valid;
        assign f_ready = b_in_ready[q];
        assign b_in_data[q*W_IN*8+:W_IN*8] = f_data;
      end else begin : g_repack
        mixtd_repack #(.W_IN(FW_IN), .W_OUT(W_IN)) repack (
            .clk, .rst_n, .in_valid(f_valid), .in_ready(f_ready), .in_data(f_data),
            .out_valid(b_in_valid[q]), .out_ready(b_in_ready[q]), .out_data(b_in_data[q*W_IN*8+:W_IN*8])
        );
      end
    end else begin : g_idle
      assign in_ready[q] = 1'b0;
    end
  end

  for (genvar k = 0; k < 8; ++k) begin : g_out
    if (k < P_OUT) begin : g_used
      mixtd_stream_fifo #(.WIDTH(W_OUT * 8), .DEPTH(2)) fifo (
          .clk, .rst_n, .in_valid(b_out_valid[k]), .in_ready(b_out_ready[k]),
          .in_data(b_out_data[k*W_OUT*8+:W_OUT*8]), .out_valid(out_valid[k]), .out_ready(out_ready[k]),
          .out_data(out_data[k][W_OUT*8-1:0])
      );
      if (W_OUT < 8) begin : g_pad
        assign out_data[k][63:W_OUT*8] = '0;
      end
    end else begin : g_idle
      assign out_valid[k] = 1'b0;
      assign out_data[k] = '0;
    end
  end

  if (KIND == 0) begin : g_split
    mixtd_group_split #(.CHANNELS(CHANNELS), .GROUPS(G_OUT), .W_IN(W_IN), .W_OUT(W_OUT)) dut (
        .clk, .rst_n, .in_valid(b_in_valid), .in_ready(b_in_ready), .in_data(b_in_data),
        .out_valid(b_out_valid), .out_ready(b_out_ready), .out_data(b_out_data)
    );
  end else if (KIND == 1) begin : g_merge
    mixtd_group_merge #(.CHANNELS(CHANNELS), .GROUPS(G_IN), .W_IN(W_IN), .W_OUT(W_OUT)) dut (
        .clk, .rst_n, .in_valid(b_in_valid), .in_ready(b_in_ready), .in_data(b_in_data),
        .out_valid(b_out_valid), .out_ready(b_out_ready), .out_data(b_out_data)
    );
  end else if (KIND == 2) begin : g_regroup
    mixtd_regroup #(.CHANNELS(CHANNELS), .G_IN(G_IN), .G_OUT(G_OUT), .W_IN(W_IN), .W_OUT(W_OUT)) dut (
        .clk, .rst_n, .in_valid(b_in_valid), .in_ready(b_in_ready), .in_data(b_in_data),
        .out_valid(b_out_valid), .out_ready(b_out_ready), .out_data(b_out_data)
    );
  end else if (KIND == 3) begin : g_fork
    mixtd_fork #(.CHANNELS(CHANNELS), .COPIES(P_OUT), .W_IN(W_IN), .W_OUT(W_OUT)) dut (
        .clk, .rst_n, .in_valid(b_in_valid), .in_ready(b_in_ready), .in_data(b_in_data),
        .out_valid(b_out_valid), .out_ready(b_out_ready), .out_data(b_out_data)
    );
  end else if (KIND == 4) begin : g_group_add
    mixtd_group_add #(
        .CHANNELS(CHANNELS), .PARTIALS(P_IN), .W_IN(W_IN), .W_OUT(W_OUT), .REQUANT_FILE(REQUANT_FILE)
    ) dut (
        .clk, .rst_n, .in_valid(b_in_valid), .in_ready(b_in_ready), .in_data(b_in_data),
        .out_valid(b_out_valid[0]), .out_ready(b_out_ready[0]), .out_data(b_out_data), .load(82'd0)
    );
  end else if (KIND == 5) begin : g_eltwise_add
    mixtd_eltwise_add #(
        .CHANNELS(CHANNELS), .INPUTS(P_IN), .W_IN(W_IN), .W_OUT(W_OUT), .EXPS(EXPS_ALL[8*P_IN-1:0]),
        .BIAS(BIAS), .SHIFT(SHIFT), .RELU(RELU)
    ) dut (
        .clk, .rst_n, .in_valid(b_in_valid), .in_ready(b_in_ready), .in_data(b_in_data),
        .out_valid(b_out_valid[0]), .out_ready(b_out_ready[0]), .out_data(b_out_data)
    );
  end else if (KIND == 6) begin : g_relu
    mixtd_relu #(.CHANNELS(CHANNELS), .W_IN(W_IN), .W_OUT(W_OUT)) dut (
        .clk, .rst_n, .in_valid(b_in_valid), .in_ready(b_in_ready), .in_data(b_in_data),
        .out_valid(b_out_valid), .out_ready(b_out_ready), .out_data(b_out_data)
    );
  end else begin : g_global_avg_pool
    mixtd_global_avg_pool #(.CHANNELS(CHANNELS), .PIXELS(PIXELS), .W(W_IN)) dut (
        .clk, .rst_n, .in_valid(b_in_valid[0]), .in_ready(b_in_ready[0]), .in_data(b_in_data),
        .out_valid(b_out_valid[0]), .out_ready(b_out_ready[0]), .out_data(b_out_data)
    );
  end

  // verilator lint_off UNUSEDSIGNAL
  logic unused;
  always_comb begin
    unused = 1'b0;
    for (int q = 0; q < 4; ++q) unused ^= ^in_data[q] ^ in_valid[q];
    for (int k = 0; k < 8; ++k) unused ^= out_ready[k];
  end
  // verilator lint_on UNUSEDSIGNAL
endmodule
