// Re-packs a stream of W_IN-word beats into W_OUT-word beats (words in
// order, lane 0 first) — what sc::InPort does when a block reads a FIFO of
// another width (arch/Timing.h: "a consumer's input port re-packs beats to
// its own width at no extra cost").
//
// No added latency: an output beat may use the words of the input beat
// offered in the same cycle. The words of earlier beats wait in a buffer of
// W_IN + W_OUT words, so an input beat is taken as soon as it fits; SystemC
// instead keeps a beat in its FIFO until its last word is read, which frees
// the FIFO slot a few cycles later than here (docs/rtl.md).
module mixtd_repack #(
    parameter int W_IN = 1,
    parameter int W_OUT = 1
) (
    input  logic              clk,
    input  logic              rst_n,
    input  logic              in_valid,
    output logic              in_ready,
    input  logic [W_IN*8-1:0] in_data,
    output logic              out_valid,
    input  logic              out_ready,
    output logic [W_OUT*8-1:0] out_data
);
  localparam int CAPW = W_IN + W_OUT;
  localparam int NB = $clog2(CAPW + 1);
  logic [CAPW*8-1:0] words_q;  // words_q[0 +: 8·count_q] are held
  logic [NB-1:0] count_q;

  wire [(CAPW+W_IN)*8-1:0] with_input = {{W_IN * 8{1'b0}}, words_q} | ({{CAPW * 8{1'b0}}, in_data} << (8 * count_q));
  assign out_valid = count_q >= NB'(W_OUT) || in_valid && count_q + NB'(W_IN) >= NB'(W_OUT);
  assign out_data = with_input[W_OUT*8-1:0];
  wire pop = out_valid && out_ready;
  wire [NB:0] after_pop = {1'b0, count_q} - (NB + 1)'(pop ? W_OUT : 0);
  assign in_ready = after_pop + (NB + 1)'(W_IN) <= (NB + 1)'(CAPW);
  wire push = in_valid && in_ready;

  // verilator lint_off UNUSEDSIGNAL
  wire [(CAPW+W_IN)*8-1:0] merged = push ? with_input : {{W_IN * 8{1'b0}}, words_q};
  wire [(CAPW+W_IN)*8-1:0] shifted = merged >> (8 * W_OUT);
  // verilator lint_on UNUSEDSIGNAL
  wire [CAPW*8-1:0] rest = shifted[CAPW*8-1:0];  // the rest fits: the output took W_OUT words
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      count_q <= '0;
      words_q <= '0;
    end else begin
      count_q <= NB'(after_pop + (NB + 1)'(push ? W_IN : 0));
      words_q <= pop ? rest : merged[CAPW*8-1:0];
    end
  end
endmodule
