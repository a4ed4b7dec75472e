// The kernel's weight stream into the weight-load bus (docs/rtl.md "Weight
// load"; mixtd_load_port is the other end). The stream is 64-bit beats of
// segments, one per memory (rtl::weight_stream writes them):
//
//   header  [63:48] 16'h4D57 ("MW"), [47:32] the memory's ID, [31:0] the
//           number of image beats that follow
//   beats   the memory's image, mixtd_load_port's order
//
// in_ready is always high (the bus never waits). A header without the magic
// is skipped and counted in `bad` (the package's host reads it back through
// the kernel's status register); `segments` counts the headers taken.
module mixtd_weight_loader (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        in_valid,
    output logic        in_ready,
    input  logic [63:0] in_data,
    output logic [81:0] load,
    output logic [15:0] segments,
    output logic [15:0] bad
);
  localparam logic [15:0] Magic = 16'h4D57;
  logic [31:0] left;
  logic [15:0] id;
  logic first;
  assign in_ready = 1'b1;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      left <= '0;
      load[81] <= 1'b0;
      segments <= '0;
      bad <= '0;
    end else begin
      load[81] <= 1'b0;
      if (in_valid) begin
        if (left == 0) begin
          if (in_data[63:48] == Magic) begin
            left <= in_data[31:0];
            id <= in_data[47:32];
            first <= 1'b1;
            segments <= segments + 1'b1;
          end else begin
            bad <= bad + 1'b1;
          end
        end else begin
          load[81] <= 1'b1;
          first <= 1'b0;
          left <= left - 1'b1;
        end
      end
    end
    if (in_valid && left != 0) load[80:0] <= {first, id, in_data};
  end
endmodule
