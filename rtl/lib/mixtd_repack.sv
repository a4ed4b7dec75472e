// Re-packs a stream of W_IN-word beats into W_OUT-word beats (words in
// order, lane 0 first) — the RTL twin of sc::InPort reading a FIFO of
// another width (arch/Timing.h: "a consumer's input port re-packs beats to
// its own width at no extra cost"). It sits between a FIFO's output (in_*)
// and the consumer (out_*) and follows InPort::read's rules cycle for cycle:
//
//  * the FIFO's head beat is read in place, from word offset_q on; it is
//    popped in the cycle its last word leaves in an output beat;
//  * a head beat whose remaining words cannot complete the next output beat
//    is absorbed — popped into a buffer of up to W_OUT − 1 words — as soon
//    as it is there (also in the cycle the previous output beat leaves),
//    whether or not the consumer is ready;
//  * no added latency: an output beat may use the head beat offered in the
//    same cycle.
//
// So a FIFO slot is held exactly as long as in SystemC (a beat wider than
// the consumer's stays in its FIFO until its last word is read).
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
  localparam int CATW = W_OUT + W_IN;  // buffered words (< W_OUT) + the head's
  localparam int NB = $clog2(CATW + 1) + 1;  // counts words, with a sign bit
  logic [W_OUT*8-1:0] words_q;  // words_q[0 +: 8·count_q]: absorbed, not yet sent; zero above
  logic [NB-1:0] count_q;       // 0 .. W_OUT − 1
  logic [NB-1:0] offset_q;      // 0 .. W_IN − 1: words of the head beat already sent

  // The buffered words, then the head beat's unsent words.
  wire [W_IN*8-1:0] head = in_data >> (8 * offset_q);
  wire [CATW*8-1:0] cat = {{W_IN * 8{1'b0}}, words_q} | ({{W_OUT * 8{1'b0}}, head} << (8 * count_q));
  wire [NB-1:0] avail = count_q + NB'(W_IN) - offset_q;  // with the head beat
  assign out_valid = in_valid && avail >= NB'(W_OUT);
  assign out_data = cat[W_OUT*8-1:0];
  wire fire = out_valid && out_ready;
  // Words of the head beat left after this cycle's output beat: fewer than
  // an output beat's, and the head is popped (into the buffer).
  wire [NB-1:0] left = avail - NB'(fire ? W_OUT : 0);
  assign in_ready = left < NB'(W_OUT);
  wire pop = in_valid && in_ready;
  // verilator lint_off UNUSEDSIGNAL
  wire [CATW*8-1:0] rest = fire ? cat >> (8 * W_OUT) : cat;
  // verilator lint_on UNUSEDSIGNAL

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      count_q <= '0;
      offset_q <= '0;
      words_q <= '0;
    end else if (pop) begin
      count_q <= left;
      offset_q <= '0;
      words_q <= rest[W_OUT*8-1:0];
    end else if (fire) begin
      count_q <= '0;
      offset_q <= offset_q + NB'(W_OUT) - count_q;
      words_q <= '0;  // cat ORs the buffer in: keep the unused words zero
    end
  end
endmodule
