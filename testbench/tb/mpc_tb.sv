// Co-simulation testbench for the generated MPC units (docs/hw/cosim.md).
// The driver is tb/stream_driver.svh, shared with tb/bdi_tb.sv and
// tb/dpc_tb.sv (plusargs, schedule file, replay after reset, protocol
// checks, record format: see its header); this file binds the units to the
// vector and output buses. One define selects the unit:
//
//   UNIT_COMPRESSOR    mpc_compressor   vector in_block (256)       out {out_bits, out_len, out_model}
//   UNIT_DECOMPRESSOR  mpc_decompressor vector {in_len, in_bits}    out {out_block, out_error, out_model}
//   UNIT_LOOPBACK      mpc_compressor -> mpc_decompressor, vector as the compressor, out as the decompressor
//
// H header bits, W = H + 256 the compressed-bit bus width, 9-bit lengths.
// With MUTANTS defined the compressor or decompressor is a mutation schema
// (hdl_ir::mutate::schema) with an extra input `mutant`, driven from the
// plusarg +mutant=K (0, the default: the unit as generated).
// Runs unchanged on Icarus (iverilog -g2012) and on version 5 of Verilator
// with --binary --timing. Define TB_TRACE to allow VCD dumps (a Verilator
// build then needs --trace; Icarus always can).
`timescale 1ns / 1ps
`define STREAM_TB mpc_tb
module mpc_tb #(
    parameter integer H = 3,
    parameter integer W = 259
);
  localparam integer LW = 9;
`ifdef UNIT_DECOMPRESSOR
  localparam integer VW = LW + W;
  localparam integer OW = 256 + 1 + H;
`else
  localparam integer VW = 256;
`ifdef UNIT_COMPRESSOR
  localparam integer OW = W + LW + H;
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
`ifdef MUTANTS
  reg [15:0] mutant_sel;
  initial if (!$value$plusargs("mutant=%d", mutant_sel)) mutant_sel = 16'd0;
`endif

`ifdef UNIT_COMPRESSOR
  wire [W-1:0] out_bits;
  wire [LW-1:0] out_len;
  mpc_compressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_block(in_vec),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_bits(out_bits),
      .out_len(out_len),
      .out_model(out_model)
  );
  assign out_all = {out_bits, out_len, out_model};
`elsif UNIT_DECOMPRESSOR
  wire [255:0] out_block;
  wire out_error;
  mpc_decompressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_bits(in_vec[W-1:0]),
      .in_len(in_vec[VW-1:W]),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_block(out_block),
      .out_error(out_error),
      .out_model(out_model)
  );
  assign out_all = {out_block, out_error, out_model};
`else
  wire c_valid;
  wire c_ready;
  wire [W-1:0] c_bits;
  wire [LW-1:0] c_len;
  wire [H-1:0] c_model;
  wire [255:0] out_block;
  wire out_error;
  mpc_compressor comp (
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_block(in_vec),
      .out_valid(c_valid),
      .out_ready(c_ready),
      .out_bits(c_bits),
      .out_len(c_len),
      .out_model(c_model)
  );
  mpc_decompressor dec (
      .clk(clk),
      .rst(rst),
      .in_valid(c_valid),
      .in_ready(c_ready),
      .in_bits(c_bits),
      .in_len(c_len),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_block(out_block),
      .out_error(out_error),
      .out_model(out_model)
  );
  assign out_all = {out_block, out_error, out_model};
`endif

`include "stream_driver.svh"
endmodule
