// One memory's end of the weight-load bus (docs/rtl.md "Weight load"). The
// bus, LOAD_W = 82 bits, is {valid, first, id[15:0], data[63:0]}: a beat of a
// memory's image, addressed by the memory's ID; `first` marks the segment's
// first beat. mixtd_weight_loader drives it from the kernel's weight stream
// and the top passes it from memory to memory through a register each
// (a chain along the pipeline, so it crosses SLRs registered).
//
// A memory word of WIDTH bits is S = ⌈WIDTH/64⌉ beats, least significant
// first (the last beat's bits above WIDTH are ignored); the words come in
// address order from 0. The port shifts the beats into a word register and
// writes the memory one cycle after the word's last beat (we, waddr, wdata).
// A segment longer than DEPTH words wraps; the package writes exact ones
// (rtl::weight_stream). ID = 0: no port (the memory keeps its ROM image).
module mixtd_load_port #(
    parameter int ID = 0,
    parameter int WIDTH = 8,
    parameter int DEPTH = 1,
    // Derived (do not set).
    parameter int AW = DEPTH > 1 ? $clog2(DEPTH) : 1
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [81:0]      load,
    output logic             we,
    output logic [AW-1:0]    waddr,
    output logic [WIDTH-1:0] wdata
);
  localparam int S = (WIDTH + 63) / 64;
  localparam int SW = S > 1 ? $clog2(S) : 1;
  wire valid = load[81], first = load[80];
  wire [15:0] id = load[79:64];
  wire [63:0] data = load[63:0];
  wire hit = ID != 0 && valid && id == 16'(ID);

  logic [S*64-1:0] word;  // the beats so far, the newest on top
  logic [SW-1:0] slice;
  logic [AW-1:0] addr;
  wire [SW-1:0] s_now = first ? '0 : slice;
  wire [AW-1:0] a_now = first ? '0 : addr;
  wire complete = s_now == SW'(S - 1);
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      slice <= '0;
      addr <= '0;
      we <= 1'b0;
    end else begin
      we <= hit && complete;
      if (hit) begin
        slice <= complete ? '0 : s_now + 1'b1;
        if (complete) addr <= a_now + 1'b1;
      end
    end
    if (hit) waddr <= a_now;
  end
  if (S > 1) begin : g_shift
    always_ff @(posedge clk) if (hit) word <= {data, word[S*64-1:64]};
  end else begin : g_one
    always_ff @(posedge clk) if (hit) word <= data;
  end
  assign wdata = word[WIDTH-1:0];
  // verilator lint_off UNUSEDSIGNAL
  wire unused = S * 64 > WIDTH ? |word : 1'b0;
  // verilator lint_on UNUSEDSIGNAL
endmodule
