// Test bench top for a grouped mixtd_conv_stage (1 < GROUPS, dense): the
// stage between two depth-2 stream FIFOs, as sim::run_window_block puts the
// SystemC Stage between two BeatFifos (tb_conv_stage with GROUPS instead of
// DEPTHWISE). Its parameters come from tests/rtl/grouped_stage_grid.txt (one
// instance per line, see tests/rtl/CMakeLists.txt); `cfg` reports them so
// that the C++ test builds its reference from the very numbers the RTL was
// built with.
module tb_grouped_conv_stage #(
    parameter int C = 8, H = 8, W = 8, N = 8, KH = 3, KW = 3, SH = 1, SW = 1, PH = 1, PW = 1,
    parameter int P_IN = 1, P_OUT = 1, FINE = 1,
    parameter int GROUPS = 2,
    parameter int CAP = 32,
    parameter WEIGHT_FILE = "", REQUANT_FILE = ""
) (
    input  logic               clk,
    input  logic               rst_n,
    input  logic               in_valid,
    output logic               in_ready,
    input  logic [63:0]        in_data,  // the low P_IN*8 bits
    output logic               out_valid,
    input  logic               out_ready,
    output logic [63:0]        out_data,  // the low P_OUT*8 bits
    output logic [31:0]        cfg[16]
);
  assign cfg = '{C, H, W, N, KH, KW, SH, SW, PH, PW, P_IN, P_OUT, FINE, GROUPS, CAP, 0};
  logic a_valid, a_ready, b_valid, b_ready;
  logic [P_IN*8-1:0] a_data;
  logic [P_OUT*8-1:0] b_data;
  mixtd_stream_fifo #(.WIDTH(P_IN * 8), .DEPTH(2)) in_fifo (
      .clk, .rst_n, .in_valid, .in_ready, .in_data(in_data[P_IN*8-1:0]),
      .out_valid(a_valid), .out_ready(a_ready), .out_data(a_data)
  );
  mixtd_conv_stage #(
      .C(C), .H(H), .W(W), .N(N), .KH(KH), .KW(KW), .SH(SH), .SW(SW), .PH(PH), .PW(PW),
      .P_IN(P_IN), .P_OUT(P_OUT), .FINE(FINE), .DEPTHWISE(0), .GROUPS(GROUPS), .CAP(CAP),
      .WEIGHT_FILE(WEIGHT_FILE), .REQUANT_FILE(REQUANT_FILE)
  ) dut (
      .clk, .rst_n, .in_valid(a_valid), .in_ready(a_ready), .in_data(a_data),
      .out_valid(b_valid), .out_ready(b_ready), .out_data(b_data), .load(82'd0)
  );
  mixtd_stream_fifo #(.WIDTH(P_OUT * 8), .DEPTH(2)) out_fifo (
      .clk, .rst_n, .in_valid(b_valid), .in_ready(b_ready), .in_data(b_data),
      .out_valid, .out_ready, .out_data(out_data[P_OUT*8-1:0])
  );
  if (P_OUT < 8) begin : g_pad
    assign out_data[63:P_OUT*8] = '0;
  end
  // verilator lint_off UNUSEDSIGNAL
  wire unused = ^in_data;  // only the low P_IN*8 bits carry words
  // verilator lint_on UNUSEDSIGNAL
endmodule
