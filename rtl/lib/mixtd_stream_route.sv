// The word-routing core of the streaming blocks between engines — the RTL
// twin of sc::StreamBlock's run() loop (models/sc/src/StreamBlocks.cpp)
// with latency kStreamLatency = 1. The named blocks (mixtd_group_split,
// mixtd_group_merge, mixtd_regroup, mixtd_fork, mixtd_relu, and the adders
// mixtd_group_add / mixtd_eltwise_add behind their requantiser pipeline)
// are thin wrappers around it.
//
// A tensor flows pixel by pixel, channel innermost. Per pixel, input port q
// carries WORDS_IN = CHANNELS / GROUPS_IN words in W_IN-word beats, output
// port k carries WORDS_OUT = CHANNELS / GROUPS_OUT words in W_OUT-word
// beats (lane 0 in the low bits; port q of a bus at [q*W*8 +: W*8]). Output
// word i of port k comes from (ROUTING):
//   0 strided  channel c = k + i*GROUPS_OUT, from port c mod GROUPS_IN,
//              word c / GROUPS_IN (split: GROUPS_IN = 1; merge:
//              GROUPS_OUT = 1; regroup: the round-robin FIFO array); the
//              ports are the groups
//   1 copy     word i of port 0 (fork: PORTS_OUT copies)
//   2 relu     as copy, max(word, 0)
//   3 all      word i of every input port side by side: output lane
//              q*W_OUT + l is word b*W_OUT + l of port q (the adders' input)
//
// Timing, exactly the SystemC rules (Timing.h, stream_cycles):
//  * every port moves at most one beat per cycle, all ports in parallel;
//  * an output beat may leave one cycle after the last input beat holding
//    a word it needs (the words wait in registers; out_data is a mux of
//    them);
//  * each input port buffers two pixels: port q may take a beat of pixel x
//    once every output port has sent all of pixel x − 2 — in the very
//    cycle the last of them leaves (the slot is read before it is
//    written), so in_ready depends on out_ready combinationally, as the
//    SystemC rule "free = done[x − 2] + 1 − latency" says.
// Pixel counters run modulo 8: an input port can be at most two pixels
// ahead of any output port and, through the other ports, at most four
// behind, so the difference fits a signed 3-bit number.
module mixtd_stream_route #(
    parameter int ROUTING = 1,
    parameter int CHANNELS = 8,
    parameter int GROUPS_IN = 1,
    parameter int GROUPS_OUT = 1,
    parameter int PORTS_IN = 1,
    parameter int PORTS_OUT = 1,
    parameter int W_IN = 1,
    parameter int W_OUT = 1,
    parameter int OUT_LANES = ROUTING == 3 ? PORTS_IN * W_OUT : W_OUT
) (
    input  logic                            clk,
    input  logic                            rst_n,
    input  logic [PORTS_IN-1:0]             in_valid,
    output logic [PORTS_IN-1:0]             in_ready,
    input  logic [PORTS_IN*W_IN*8-1:0]      in_data,
    output logic [PORTS_OUT-1:0]            out_valid,
    input  logic [PORTS_OUT-1:0]            out_ready,
    output logic [PORTS_OUT*OUT_LANES*8-1:0] out_data
);
  localparam int WORDS_IN = CHANNELS / GROUPS_IN;
  localparam int WORDS_OUT = CHANNELS / GROUPS_OUT;
  localparam int BEATS_IN = WORDS_IN / W_IN;
  localparam int BEATS_OUT = WORDS_OUT / W_OUT;
  localparam int BO = BEATS_OUT > 1 ? $clog2(BEATS_OUT) : 1;
  localparam int NB = $clog2(BEATS_IN + 1);  // counts input beats, 0..BEATS_IN
  localparam int SLOT = WORDS_IN * 8;        // bits of one pixel of one port

  // Where output lane l of port k at beat b comes from: input port, word.
  function integer src_port;
    input integer k, l, b;
    integer c;
    begin
      c = k + (b * W_OUT + l) * GROUPS_OUT;
      if (ROUTING == 0) src_port = c % GROUPS_IN;
      else if (ROUTING == 3) src_port = l / W_OUT;
      else src_port = 0;
    end
  endfunction
  function integer src_word;
    input integer k, l, b;
    integer c;
    begin
      c = k + (b * W_OUT + l) * GROUPS_OUT;
      if (ROUTING == 0) src_word = c / GROUPS_IN;
      else if (ROUTING == 3) src_word = b * W_OUT + l % W_OUT;
      else src_word = b * W_OUT + l;
    end
  endfunction
  // Beats of port q's pixel that output beat b of port k waits for.
  function integer need_beats;
    input integer k, b, pq;
    integer l, n;
    begin
      need_beats = 0;
      for (l = 0; l < OUT_LANES; l = l + 1)
        if (src_port(k, l, b) == pq) begin
          n = src_word(k, l, b) / W_IN + 1;
          if (n > need_beats) need_beats = n;
        end
    end
  endfunction

  logic [PORTS_IN*2*SLOT-1:0] buffer;  // port q, slot s at [(q*2 + s)*SLOT +: SLOT]
  logic [PORTS_IN*NB-1:0] in_beat;     // beats taken of the current pixel
  logic [PORTS_IN*3-1:0] in_pix;       // pixel being taken, modulo 8
  logic [PORTS_OUT*BO-1:0] out_beat;   // beat being offered
  logic [PORTS_OUT*3-1:0] out_pix;     // pixel being offered, modulo 8
  // Tables indexed by the beat on offer as arrays, not as part-selects at
  // b·(stride): yosys would spend a DSP48E2 on each such index product.
  logic [NB-1:0] need[PORTS_OUT][BEATS_OUT][PORTS_IN];   // need_beats(k, b, q)
  logic [7:0] candidate[PORTS_OUT][OUT_LANES][BEATS_OUT];  // lane l of beat b

  for (genvar k = 0; k < PORTS_OUT; k = k + 1) begin : g_out
    for (genvar b = 0; b < BEATS_OUT; b = b + 1) begin : g_beat
      for (genvar q = 0; q < PORTS_IN; q = q + 1) begin : g_need
        localparam int N = need_beats(k, b, q);
        assign need[k][b][q] = N[NB-1:0];
      end
      for (genvar l = 0; l < OUT_LANES; l = l + 1) begin : g_lane
        localparam int Q = src_port(k, l, b);
        localparam int J = src_word(k, l, b);
        wire [7:0] word = out_pix[k*3] ? buffer[(Q * 2 + 1) * SLOT + J * 8+:8] : buffer[Q * 2 * SLOT + J * 8+:8];
        assign candidate[k][l][b] =
            ROUTING == 2 && word[7] ? 8'd0 : word;
      end
    end
  end

  logic [PORTS_OUT-1:0] finishing;  // the last beat of a pixel leaves this cycle
  always_comb begin
    for (int k = 0; k < PORTS_OUT; k = k + 1) begin
      logic valid;
      logic [BO-1:0] b;  // the beat on offer
      b = out_beat[k*BO+:BO];
      valid = 1'b1;
      for (int q = 0; q < PORTS_IN; q = q + 1) begin
        logic signed [2:0] ahead;  // input q's pixel minus this port's
        logic [NB-1:0] n;
        ahead = in_pix[q*3+:3] - out_pix[k*3+:3];
        n = need[k][b][q];
        if (n != 0 && !(ahead > 0 || (ahead == 0 && in_beat[q*NB+:NB] >= n)))
          valid = 1'b0;
      end
      out_valid[k] = valid;
      finishing[k] = valid && out_ready[k] && out_beat[k*BO+:BO] == BO'(BEATS_OUT - 1);
      for (int l = 0; l < OUT_LANES; l = l + 1)
        out_data[(k*OUT_LANES+l)*8+:8] = candidate[k][l][b];
    end
    for (int q = 0; q < PORTS_IN; q = q + 1) begin
      logic ready;
      ready = 1'b1;
      for (int k = 0; k < PORTS_OUT; k = k + 1) begin
        logic signed [2:0] ahead;
        ahead = in_pix[q*3+:3] - out_pix[k*3+:3];
        if (ahead > 1 && !(ahead == 2 && finishing[k])) ready = 1'b0;
      end
      in_ready[q] = ready;
    end
  end

  // Each beat has its own place: a decoder, not a shifter, writes it.
  always_ff @(posedge clk)
    for (int q = 0; q < PORTS_IN; q = q + 1)
      for (int s = 0; s < 2; s = s + 1)
        for (int b = 0; b < BEATS_IN; b = b + 1)
          if (in_valid[q] && in_ready[q] && in_pix[q*3] == s[0] && in_beat[q*NB+:NB] == b[NB-1:0])
            buffer[(q*2+s)*SLOT+b*W_IN*8+:W_IN*8] <= in_data[q*W_IN*8+:W_IN*8];

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      in_beat <= '0;
      in_pix <= '0;
      out_beat <= '0;
      out_pix <= '0;
    end else begin
      for (int q = 0; q < PORTS_IN; q = q + 1)
        if (in_valid[q] && in_ready[q]) begin
          if (in_beat[q*NB+:NB] == NB'(BEATS_IN - 1)) begin
            in_beat[q*NB+:NB] <= '0;
            in_pix[q*3+:3] <= in_pix[q*3+:3] + 3'd1;
          end else in_beat[q*NB+:NB] <= in_beat[q*NB+:NB] + 1'b1;
        end
      for (int k = 0; k < PORTS_OUT; k = k + 1)
        if (out_valid[k] && out_ready[k]) begin
          if (finishing[k]) begin
            out_beat[k*BO+:BO] <= '0;
            out_pix[k*3+:3] <= out_pix[k*3+:3] + 3'd1;
          end else out_beat[k*BO+:BO] <= out_beat[k*BO+:BO] + 1'b1;
        end
    end
  end
endmodule
