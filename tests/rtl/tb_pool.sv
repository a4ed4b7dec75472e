// Test bench top for mixtd_pool: the pool between two depth-2 stream FIFOs,
// as sim::run_window_block puts the SystemC Pool between two BeatFifos;
// `cfg` reports the parameters (see tb_conv_stage.sv).
module tb_pool #(
    parameter int C = 8, H = 8, W = 8, KH = 2, KW = 2, SH = 2, SW = 2, PH = 0, PW = 0,
    parameter int P = 1, MAX = 1, COUNT_PAD = 0, CAP = 16
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic           in_valid,
    output logic           in_ready,
    input  logic [63:0]    in_data,  // the low P*8 bits
    output logic           out_valid,
    input  logic           out_ready,
    output logic [63:0]        out_data,  // the low P*8 bits
    output logic [31:0]    cfg[16]
);
  assign cfg = '{C, H, W, KH, KW, SH, SW, PH, PW, P, MAX, COUNT_PAD, CAP, 0, 0, 0};
  logic a_valid, a_ready, b_valid, b_ready;
  logic [P*8-1:0] a_data, b_data;
  mixtd_stream_fifo #(.WIDTH(P * 8), .DEPTH(2)) in_fifo (
      .clk, .rst_n, .in_valid, .in_ready, .in_data(in_data[P*8-1:0]),
      .out_valid(a_valid), .out_ready(a_ready), .out_data(a_data)
  );
  mixtd_pool #(
      .C(C), .H(H), .W(W), .KH(KH), .KW(KW), .SH(SH), .SW(SW), .PH(PH), .PW(PW),
      .P(P), .MAX(MAX), .COUNT_PAD(COUNT_PAD), .CAP(CAP)
  ) dut (
      .clk, .rst_n, .in_valid(a_valid), .in_ready(a_ready), .in_data(a_data),
      .out_valid(b_valid), .out_ready(b_ready), .out_data(b_data)
  );
  mixtd_stream_fifo #(.WIDTH(P * 8), .DEPTH(2)) out_fifo (
      .clk, .rst_n, .in_valid(b_valid), .in_ready(b_ready), .in_data(b_data),
      .out_valid, .out_ready, .out_data(out_data[P*8-1:0])
  );
  if (P < 8) begin : g_pad
    assign out_data[63:P*8] = '0;
  end
  // verilator lint_off UNUSEDSIGNAL
  wire unused = ^in_data;  // only the low P*8 bits carry words
  // verilator lint_on UNUSEDSIGNAL
endmodule
