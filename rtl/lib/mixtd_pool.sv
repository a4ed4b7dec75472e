// Max / average pooling (the RTL twin of sc::Pool: LineBuffer + PoolUnit),
// P channels per cycle, one window per C/P cycles:
//
//  * the line buffer hands over all kh·kw positions of P channels at once
//    (FINE = kh·kw), one output block (P channels) per cycle;
//  * the block's beat is offered the cycle after its read
//    (arch::kStreamLatency − 1 = 0 cycles of pipeline behind the read);
//  * max ignores padding; average is numerics::average: the sum over the
//    window's pixels in_frame the frame (and, with COUNT_PAD, a count that
//    includes the padding) times ⌊(2^24 + ⌊n/2⌋)/n⌋, rounded, shifted by 24.
module mixtd_pool #(
    parameter int C = 8,
    parameter int H = 8,
    parameter int W = 8,
    parameter int KH = 2,
    parameter int KW = 2,
    parameter int SH = 2,
    parameter int SW = 2,
    parameter int PH = 0,
    parameter int PW = 0,
    parameter int P = 1,
    parameter int MAX = 1,        // 1: max, 0: average
    parameter int COUNT_PAD = 0,  // average: padding counts towards n
    parameter int CAP = 16
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             in_valid,
    output logic             in_ready,
    input  logic [P*8-1:0]   in_data,
    output logic             out_valid,
    input  logic             out_ready,
    output logic [P*8-1:0]   out_data
);
  localparam int KK = KH * KW;
  localparam int BLOCKS = C / P;
  localparam int CREDITS = 3;
  localparam int BW = BLOCKS > 1 ? $clog2(BLOCKS) : 1;
  localparam int CRW = $clog2(CREDITS + 1);
  localparam int NB = $clog2(KK + 1);

  logic [BW-1:0] blk;
  logic [CRW-1:0] outstanding;
  logic win_valid;
  wire credit = outstanding < CRW'(CREDITS);
  wire issue = credit && (blk != '0 || win_valid);
  wire last_block = blk == BW'(BLOCKS - 1);
  wire out_pop = out_valid && out_ready;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      blk <= '0;
      outstanding <= '0;
    end else begin
      if (issue) blk <= last_block ? '0 : blk + 1'b1;
      outstanding <= outstanding + CRW'(issue) - CRW'(out_pop);
    end
  end

  logic [KK*P*8-1:0] x;
  logic [KK-1:0] pad;
  mixtd_line_buffer #(
      .C(C), .H(H), .W(W), .KH(KH), .KW(KW), .SH(SH), .SW(SW), .PH(PH), .PW(PW),
      .P_IN(P), .FINE(KK), .CAP(CAP)
  ) line_buffer (
      .clk, .rst_n, .in_valid, .in_ready, .in_data,
      .win_valid, .rd_en(issue), .rd_cc(blk), .rd_kc(1'b0), .rd_data(x), .rd_pad(pad),
      .win_release(issue && last_block)
  );
  logic v1;
  always_ff @(posedge clk)
    if (!rst_n) v1 <= 1'b0;
    else v1 <= issue;

  // ⌊(2^24 + ⌊n/2⌋) / n⌋ for n = 1 … KK (numerics::avg_multiplier).
  logic [24:0] mult[KK+1];
  for (genvar n = 0; n <= KK; n = n + 1) begin : g_mult
    assign mult[n] = n == 0 ? 25'd0 : 25'(((1 << 24) + n / 2) / n);
  end
  logic [NB-1:0] in_frame;
  always_comb begin
    in_frame = '0;
    for (int k = 0; k < KK; k = k + 1) in_frame = in_frame + NB'(!pad[k]);
  end
  wire [NB-1:0] count = COUNT_PAD != 0 ? NB'(KK) : in_frame;

  logic [P*8-1:0] q;
  for (genvar m = 0; m < P; m = m + 1) begin : g_lanes
    logic signed [7:0] best;
    logic signed [15:0] sum;
    logic signed [41:0] scaled;
    always_comb begin
      best = -8'sd127;
      sum = 16'sd0;
      for (int k = 0; k < KK; k = k + 1)
        if (!pad[k]) begin
          if ($signed(x[(k*P+m)*8+:8]) > best) best = $signed(x[(k*P+m)*8+:8]);
          sum = sum + 16'($signed(x[(k*P+m)*8+:8]));
        end
      scaled = (42'(sum) * $signed({17'd0, mult[count]}) + 42'sd8388608) >>> 24;
      if (MAX != 0) q[m*8+:8] = best;
      else if (scaled > 42'sd127) q[m*8+:8] = 8'sd127;
      else if (scaled < -42'sd127) q[m*8+:8] = -8'sd127;
      else q[m*8+:8] = scaled[7:0];
    end
  end

  logic fifo_ready;
  mixtd_stream_fifo #(.WIDTH(P * 8), .DEPTH(CREDITS)) out_fifo (
      .clk, .rst_n, .in_valid(v1), .in_ready(fifo_ready), .in_data(q),
      .out_valid, .out_ready, .out_data
  );
  // verilator lint_off UNUSEDSIGNAL
  wire unused = fifo_ready;  // credits keep the FIFO from overflowing
  // verilator lint_on UNUSEDSIGNAL
endmodule
