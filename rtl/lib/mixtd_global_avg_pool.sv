// Global average pooling — the RTL twin of sc::GlobalAvgPool: reads a whole
// frame of PIXELS pixels × CHANNELS channels (W words a beat, channel
// innermost), summing per channel, then emits CHANNELS / W beats of
// numerics::average(sum, PIXELS) = saturate(round_shift(sum·M, 24)) with
// M = ⌊(2^24 + ⌊PIXELS/2⌋) / PIXELS⌋ (Bfp8.h).
//
// Timing, as in SystemC (Timing.h global_pool_cycles): the first mean may
// leave kStreamLatency + 1 = 2 cycles after the frame's last input beat —
// the frame's sums move to the output bank one cycle after it, the bank
// feeds out_data — and the next frame streams in meanwhile. Two banks:
// the sums being accumulated and the sums being emitted. A complete frame
// waits in the accumulators while the output bank still sends the
// previous one (only under back-pressure: in free flow a frame takes at
// least as long to read as to emit); the input is held only then.
module mixtd_global_avg_pool #(
    parameter int CHANNELS = 8,
    parameter int PIXELS = 4,
    parameter int W = 1
) (
    input  logic clk,
    input  logic rst_n,
    input  logic in_valid,
    output logic in_ready,
    input  logic [W*8-1:0] in_data,
    output logic out_valid,
    input  logic out_ready,
    output logic [W*8-1:0] out_data
);
  localparam int BEATS = CHANNELS / W;
  localparam int BB = BEATS > 1 ? $clog2(BEATS) : 1;
  localparam int PB = PIXELS > 1 ? $clog2(PIXELS) : 1;
  localparam int ACC = $clog2(PIXELS) + 9;  // |sum| ≤ 127·PIXELS
  localparam int M = ((1 << 24) + PIXELS / 2) / PIXELS;
  localparam logic signed [63:0] M_W = {39'd0, M[24:0]};
  localparam logic signed [63:0] HALF = 64'sd1 <<< 23;

  logic [CHANNELS*ACC-1:0] acc, bank;  // channel c at [c*ACC +: ACC]
  logic [BB-1:0] in_beat, out_beat;
  logic [PB-1:0] in_pix;
  logic pending;   // acc holds a whole frame not yet in the bank
  logic sending;   // the bank holds a frame being emitted

  wire in_take = in_valid && in_ready;
  wire frame_done = in_take && in_beat == BB'(BEATS - 1) && in_pix == PB'(PIXELS - 1);
  wire bank_last = out_valid && out_ready && out_beat == BB'(BEATS - 1);
  wire transfer = pending && (!sending || bank_last);
  assign in_ready = !pending || transfer;
  assign out_valid = sending;

  always_comb
    for (int l = 0; l < W; l = l + 1) begin
      logic [ACC-1:0] s;
      logic signed [63:0] v;
      s = '0;
      for (int b = 0; b < BEATS; b = b + 1) if (out_beat == b[BB-1:0]) s = bank[(b*W+l)*ACC+:ACC];
      v = ($signed({{(64 - ACC) {s[ACC-1]}}, s}) * M_W + HALF) >>> 24;
      if (v > 64'sd127) out_data[l*8+:8] = 8'sd127;
      else if (v < -64'sd127) out_data[l*8+:8] = -8'sd127;
      else out_data[l*8+:8] = v[7:0];
    end

  always_ff @(posedge clk) begin
    if (transfer) bank <= acc;
    for (int b = 0; b < BEATS; b = b + 1)
      if (in_take && in_beat == b[BB-1:0])
        for (int l = 0; l < W; l = l + 1)
          acc[(b*W+l)*ACC+:ACC] <= (in_pix == 0 ? '0 : acc[(b*W+l)*ACC+:ACC]) +
              {{(ACC - 8) {in_data[l*8+7]}}, in_data[l*8+:8]};
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      in_beat <= '0;
      in_pix <= '0;
      out_beat <= '0;
      pending <= 1'b0;
      sending <= 1'b0;
    end else begin
      if (in_take) begin
        in_beat <= in_beat == BB'(BEATS - 1) ? '0 : in_beat + 1'b1;
        if (in_beat == BB'(BEATS - 1)) in_pix <= in_pix == PB'(PIXELS - 1) ? '0 : in_pix + 1'b1;
      end
      if (out_valid && out_ready) out_beat <= bank_last ? '0 : out_beat + 1'b1;
      if (transfer) pending <= 1'b0;
      if (frame_done) pending <= 1'b1;
      if (transfer) sending <= 1'b1;
      else if (bank_last) sending <= 1'b0;
    end
  end
endmodule
