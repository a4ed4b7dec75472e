// The s_axi_control slave of a Vitis RTL kernel with the ap_ctrl_hs register
// map (UG1393, "RTL Kernels: Control Requirements"), as Vitis HLS generates
// it for a kernel with one scalar argument:
//   0x00 CTRL  bit 0 ap_start (R/W, held until ap_ready), bit 1 ap_done (R,
//              cleared on read), bit 2 ap_idle (R), bit 3 ap_ready (R, cleared
//              on read), bit 7 auto_restart (R/W)
//   0x04 GIE   bit 0 global interrupt enable
//   0x08 IER   bit 0 ap_done, bit 1 ap_ready interrupt enable
//   0x0C ISR   bit 0 ap_done, bit 1 ap_ready (R, toggle on write 1)
//   0x10 ARG   the first argument, 32 bits (the number of frames)
//   0x18 STATUS  read-only, the `status` input (the weight loader's counts)
// The offsets are hls/include/mixtd/hls/KernelInterface.h's; kernel.xml and
// the host program take them from there too.
module mixtd_kernel_ctrl #(
    parameter int ADDR_W = 6
) (
    input  logic              clk,
    input  logic              rst_n,
    input  logic [ADDR_W-1:0] awaddr,
    input  logic              awvalid,
    output logic              awready,
    input  logic [      31:0] wdata,
    input  logic [       3:0] wstrb,
    input  logic              wvalid,
    output logic              wready,
    output logic [       1:0] bresp,
    output logic              bvalid,
    input  logic              bready,
    input  logic [ADDR_W-1:0] araddr,
    input  logic              arvalid,
    output logic              arready,
    output logic [      31:0] rdata,
    output logic [       1:0] rresp,
    output logic              rvalid,
    input  logic              rready,
    output logic              interrupt,
    // the kernel core
    output logic              ap_start,
    input  logic              ap_done,
    input  logic              ap_idle,
    input  logic              ap_ready,
    output logic [      31:0] arg0,
    input  logic [      31:0] status
);
  localparam logic [ADDR_W-1:0] CTRL = 'h00, GIE = 'h04, IER = 'h08, ISR = 'h0C, ARG0 = 'h10, STATUS = 'h18;

  // Write channel: address and data may come in either order; one write at
  // a time, answered with OKAY.
  logic [ADDR_W-1:0] waddr;
  logic have_aw, have_w;
  logic [31:0] wdata_q;
  logic [3:0] wstrb_q;
  assign awready = !have_aw && !bvalid;
  assign wready  = !have_w && !bvalid;
  assign bresp   = 2'b00;
  wire do_write = have_aw && have_w && !bvalid;

  logic int_start, int_done, int_ready, int_auto, int_gie;
  logic [1:0] int_ier, int_isr;
  logic [31:0] int_arg0;
  assign ap_start  = int_start;
  assign arg0      = int_arg0;
  assign interrupt = int_gie && |int_isr;

  // Read channel: one outstanding read; reading CTRL clears ap_done and
  // ap_ready (the host's poll consumes the event).
  assign arready = !rvalid;
  assign rresp   = 2'b00;
  wire do_read = arvalid && arready;
  wire read_ctrl = do_read && araddr == CTRL;

  function automatic logic [31:0] merge(input logic [31:0] old, input logic [31:0] d, input logic [3:0] s);
    for (int b = 0; b < 4; ++b) merge[8*b+:8] = s[b] ? d[8*b+:8] : old[8*b+:8];
  endfunction

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      have_aw <= 0;
      have_w <= 0;
      bvalid <= 0;
      rvalid <= 0;
      rdata <= 0;
      int_start <= 0;
      int_done <= 0;
      int_ready <= 0;
      int_auto <= 0;
      int_gie <= 0;
      int_ier <= 0;
      int_isr <= 0;
      int_arg0 <= 0;
    end else begin
      if (awvalid && awready) begin
        waddr   <= awaddr;
        have_aw <= 1;
      end
      if (wvalid && wready) begin
        wdata_q <= wdata;
        wstrb_q <= wstrb;
        have_w  <= 1;
      end
      if (bvalid && bready) bvalid <= 0;
      if (do_write) begin
        have_aw <= 0;
        have_w  <= 0;
        bvalid  <= 1;
      end
      if (rvalid && rready) rvalid <= 0;
      if (do_read) begin
        rvalid <= 1;
        unique case (araddr)
          CTRL: rdata <= {24'b0, int_auto, 3'b0, int_ready, ap_idle, int_done, int_start};
          GIE: rdata <= {31'b0, int_gie};
          IER: rdata <= {30'b0, int_ier};
          ISR: rdata <= {30'b0, int_isr};
          ARG0: rdata <= int_arg0;
          STATUS: rdata <= status;
          default: rdata <= 0;
        endcase
      end
      // ap_start: set by the host, held until the core is ready, set again
      // at once with auto_restart.
      if (ap_ready) int_start <= int_auto;
      if (do_write && waddr == CTRL && wstrb_q[0]) begin
        if (wdata_q[0]) int_start <= 1;
        int_auto <= wdata_q[7];
      end
      // ap_done and ap_ready: sticky until the host reads CTRL.
      if (ap_done) int_done <= 1;
      else if (read_ctrl) int_done <= 0;
      if (ap_ready) int_ready <= 1;
      else if (read_ctrl) int_ready <= 0;
      if (do_write && waddr == GIE && wstrb_q[0]) int_gie <= wdata_q[0];
      if (do_write && waddr == IER && wstrb_q[0]) int_ier <= wdata_q[1:0];
      if (do_write && waddr == ARG0) int_arg0 <= merge(int_arg0, wdata_q, wstrb_q);
      // ISR: events set their bit (if enabled), a written 1 toggles it.
      for (int b = 0; b < 2; ++b) begin
        logic ev;
        ev = (b == 0 ? ap_done : ap_ready) && int_ier[b];
        if (do_write && waddr == ISR && wstrb_q[0] && wdata_q[b]) int_isr[b] <= int_isr[b] ^ 1'b1;
        else if (ev) int_isr[b] <= 1;
      end
    end
  end
endmodule
