// A register slice for a stream that crosses an SLR boundary (issue 22,
// docs/deploy.md "The SLR floorplan"): every output and in_ready come
// straight from a flip-flop, so the wires between SLRs run register to
// register (the generator puts one slice in the producer's SLR and one in
// the consumer's). Full throughput (a skid register takes the beat that
// arrives while the output stalls), one cycle of latency, two beats held.
module mixtd_reg_slice #(
    parameter int WIDTH = 8
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             in_valid,
    output logic             in_ready,
    input  logic [WIDTH-1:0] in_data,
    output logic             out_valid,
    input  logic             out_ready,
    output logic [WIDTH-1:0] out_data
);
  logic skid_valid;
  logic [WIDTH-1:0] skid;
  assign in_ready = !skid_valid;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      out_valid <= 1'b0;
      skid_valid <= 1'b0;
    end else if (out_ready || !out_valid) begin
      out_valid <= skid_valid || in_valid;
      skid_valid <= 1'b0;
    end else if (in_valid && !skid_valid) begin
      skid_valid <= 1'b1;
    end
    if (out_ready || !out_valid) out_data <= skid_valid ? skid : in_data;
    else if (in_valid && !skid_valid) skid <= in_data;
  end
endmodule
