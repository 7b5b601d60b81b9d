// Co-simulation testbench for MPC units with programmable slots
// (docs/hw/program-slots.md, docs/hw/cosim.md "Units with programmable
// slots"). The same driver as tb/mpc_tb.sv (tb/stream_driver.svh), plus a
// configuration writer on the units' cfg_* port. One define selects the
// unit:
//
//   UNIT_COMPRESSOR    vector in_block (256)                 out {out_epoch, out_bits, out_len, out_model}
//   UNIT_DECOMPRESSOR  vector {in_epoch, in_len, in_bits}    out {out_block, out_error, out_model}
//   UNIT_LOOPBACK      compressor -> decompressor (out_epoch into in_epoch), both on one cfg_* bus
//
// H header bits (every slot loaded), W = H + 256, 9-bit lengths, 8-bit epochs.
//
// Configuration writes: +cfg=FILE, one write per line, three hex numbers
// "n addr data": the write is due once the driver has accepted n blocks.
// When writes are due the writer holds the units' in_valid low (the
// driver's offer waits, as under a stall) and issues them on cfg_we /
// cfg_addr / cfg_wdata, one per cycle, in file order; then traffic resumes
// and the units' own commit rule (cfg_pending, in_ready low until the
// pipeline drained) takes over. So block k is coded with the writes of
// every line with n <= k and none of the others. With +cfg_drain=1 the
// writer also waits until every accepted block has been delivered before
// the first write of a group (the loopback: both ends of a link switch
// with nothing in flight). A reset clears the units' registers; the writer
// then starts the file again and issues, before the next block, every
// write due for it (the registers after a reset hold what the schedule
// says, not the reset value). The writer runs on the falling edge, after
// the driver's rising-edge work, so both simulators see the same cycles.
//
// With MUTANTS defined the compressor or decompressor is a mutation schema
// (hdl_ir::mutate::schema) with an extra input `mutant`, driven from the
// plusarg +mutant=K (0, the default: the unit as generated).
`timescale 1ns / 1ps
`define STREAM_TB mpc_slots_tb
module mpc_slots_tb #(
    parameter integer H = 3,
    parameter integer W = 259
);
  localparam integer LW = 9;
  localparam integer EW = 8;
`ifdef UNIT_DECOMPRESSOR
  localparam integer VW = EW + LW + W;
  localparam integer OW = 256 + 1 + H;
`else
  localparam integer VW = 256;
`ifdef UNIT_COMPRESSOR
  localparam integer OW = EW + W + LW + H;
`else
  localparam integer OW = 256 + 1 + H;
`endif
`endif
  localparam integer RING = 256;

  reg clk = 1'b0;
  always #5 clk = ~clk;

  reg rst = 1'b1;
  reg in_valid = 1'b0;
  reg out_ready = 1'b0;
  reg [VW-1:0] in_vec = {VW{1'b0}};
  wire in_ready;
  wire out_valid;
  wire [H-1:0] out_model;
  wire [OW-1:0] out_all;

  // ---- configuration writer
  reg cfg_busy = 1'b0;
  reg cfg_we = 1'b0;
  reg [11:0] cfg_addr = 12'd0;
  reg [31:0] cfg_wdata = 32'd0;
  wire dut_in_ready;
  wire dut_in_valid = in_valid & ~cfg_busy;
  assign in_ready = dut_in_ready & ~cfg_busy;
  reg [8*1024-1:0] cfg_name;
  integer fc;
  integer cfg_r;
  integer cfg_drain;
  reg cfg_have;
  reg cfg_in_rst;
  reg [31:0] e_n, e_addr, e_data;

  wire c_pending, d_pending;
  wire [EW-1:0] c_cfg_epoch, d_cfg_epoch;
`ifdef MUTANTS
  reg [15:0] mutant_sel;
  initial if (!$value$plusargs("mutant=%d", mutant_sel)) mutant_sel = 16'd0;
`endif

`ifdef UNIT_COMPRESSOR
  wire [W-1:0] out_bits;
  wire [LW-1:0] out_len;
  wire [EW-1:0] out_epoch;
  mpc_compressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(dut_in_valid),
      .in_ready(dut_in_ready),
      .in_block(in_vec),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_bits(out_bits),
      .out_len(out_len),
      .out_model(out_model),
      .out_epoch(out_epoch),
      .cfg_we(cfg_we),
      .cfg_addr(cfg_addr),
      .cfg_wdata(cfg_wdata),
      .cfg_pending(c_pending),
      .cfg_epoch(c_cfg_epoch)
  );
  assign out_all = {out_epoch, out_bits, out_len, out_model};
`elsif UNIT_DECOMPRESSOR
  wire [255:0] out_block;
  wire out_error;
  mpc_decompressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(dut_in_valid),
      .in_ready(dut_in_ready),
      .in_bits(in_vec[W-1:0]),
      .in_len(in_vec[W+LW-1:W]),
      .in_epoch(in_vec[VW-1:W+LW]),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_block(out_block),
      .out_error(out_error),
      .out_model(out_model),
      .cfg_we(cfg_we),
      .cfg_addr(cfg_addr),
      .cfg_wdata(cfg_wdata),
      .cfg_pending(d_pending),
      .cfg_epoch(d_cfg_epoch)
  );
  assign out_all = {out_block, out_error, out_model};
`else
  wire c_valid;
  wire c_ready;
  wire [W-1:0] c_bits;
  wire [LW-1:0] c_len;
  wire [H-1:0] c_model;
  wire [EW-1:0] c_epoch;
  wire [255:0] out_block;
  wire out_error;
  mpc_compressor comp (
      .clk(clk),
      .rst(rst),
      .in_valid(dut_in_valid),
      .in_ready(dut_in_ready),
      .in_block(in_vec),
      .out_valid(c_valid),
      .out_ready(c_ready),
      .out_bits(c_bits),
      .out_len(c_len),
      .out_model(c_model),
      .out_epoch(c_epoch),
      .cfg_we(cfg_we),
      .cfg_addr(cfg_addr),
      .cfg_wdata(cfg_wdata),
      .cfg_pending(c_pending),
      .cfg_epoch(c_cfg_epoch)
  );
  mpc_decompressor dec (
      .clk(clk),
      .rst(rst),
      .in_valid(c_valid),
      .in_ready(c_ready),
      .in_bits(c_bits),
      .in_len(c_len),
      .in_epoch(c_epoch),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_block(out_block),
      .out_error(out_error),
      .out_model(out_model),
      .cfg_we(cfg_we),
      .cfg_addr(cfg_addr),
      .cfg_wdata(cfg_wdata),
      .cfg_pending(d_pending),
      .cfg_epoch(d_cfg_epoch)
  );
  assign out_all = {out_block, out_error, out_model};
`endif

`include "stream_driver.svh"

  task cfg_next;
    begin
      cfg_have = 1'b0;
      if (fc != 0) begin
        cfg_r = $fscanf(fc, "%h %h %h\n", e_n, e_addr, e_data);
        cfg_have = (cfg_r == 3);
      end
    end
  endtask

  initial begin
    fc = 0;
    cfg_have = 1'b0;
    cfg_in_rst = 1'b1;
    if (!$value$plusargs("cfg_drain=%d", cfg_drain)) cfg_drain = 0;
    if ($value$plusargs("cfg=%s", cfg_name)) begin
      fc = $fopen(cfg_name, "r");
      if (fc == 0) begin
        $display("stream_tb: FATAL: cannot open configuration writes %0s", cfg_name);
        $finish;
      end
      cfg_next();
    end
  end

  always @(negedge clk) begin
    cfg_we = 1'b0;
    if (rst) begin
      cfg_busy = 1'b0;
      if (!cfg_in_rst && fc != 0) begin
        // the registers are cleared: write the schedule again from its start
        cfg_r = $fseek(fc, 0, 0);
        cfg_next();
      end
      cfg_in_rst = 1'b1;
    end else begin
      cfg_in_rst = 1'b0;
      if (cfg_have && e_n <= next_idx) begin
        cfg_busy = 1'b1;
        if (cfg_drain == 0 || n_out == next_idx) begin
          cfg_we = 1'b1;
          cfg_addr = e_addr[11:0];
          cfg_wdata = e_data;
          cfg_next();
        end
      end else cfg_busy = 1'b0;
    end
  end
endmodule
