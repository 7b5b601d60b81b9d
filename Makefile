# Top-level entry points. `make setup run` on a fresh Debian machine installs
# the tools and runs the main job; `make test` runs every test.

MODEL   ?= models/default
CORPUS  ?= ../shared/corpus
CARGO   ?= cargo

.PHONY: all setup run gen test lint every-depth mutate mutate-control cosim-all cosim-slots cosim-quick cosim-quick-default cosim-quick-bdi-unsigned cosim-quick-bdi-signed cosim-quick-dpc cosim-bdi cosim-dpc fmt bench ratio synth synth-scaling curve sim cosim fuzz fuzz-short gpu-bench prove prove-all prove-bdi-dpc clean

all: run

## Install the simulators and synthesis tools (Debian; needs root or sudo).
setup:
	bash .ci/install-tools

## The main job on the shipped default model set: generate the RTL into
## build/<set>/, lint it, and report the set's compression ratio on the corpus.
run: gen
	$(CARGO) run --release -p bulk --bin mpc -- ratio --verify --model $(MODEL) $(wildcard $(CORPUS)/*/*.bin)

## Generate the compressor and decompressor Verilog for MODEL and lint it.
gen:
	$(CARGO) run --release -p hdl --bin gen -- --model $(MODEL)
	@dir=build/$$(sed -n 's/^name = "\(.*\)"/\1/p' $(MODEL)/model.toml | head -1); \
	if command -v verilator >/dev/null; then \
	  for f in $$dir/mpc_compressor.v $$dir/mpc_decompressor.v; do verilator --lint-only -Wall $$f || exit 1; echo "verilator -Wall: $$f clean"; done; \
	else echo "verilator not found: sudo apt-get install verilator (or make setup)"; fi

## Every test: formatting, lints, unit/property/integration tests, a short
## fuzz run of every target, and short co-simulations of every shipped
## model set and of the MAG-aware BDI and DPC units (cosim-quick).
## The tests, the short fuzz run and the short co-simulations share one
## build (profile TEST_PROFILE, see Cargo.toml), with the GPU engine on:
## `cargo test --no-run` builds the `fuzz` and `cosim` binaries for their
## integration tests, and the runs use those. The co-simulations and the
## fuzz run (TEST_JOBS at a time, default one per core) run while `cargo
## test` runs, so that they use the cores the tests leave idle; their
## output goes to SIMS_LOG and is printed when both are done, each run's
## output in one piece.
## A test whose tool, corpus or GPU adapter is missing is skipped (a failure
## under MPCGEN_REQUIRE_TOOLS=1 or MPCGEN_REQUIRE_GPU=1) and appends a line
## to SKIP_LOG (MPCGEN_SKIP_LOG); the end of the run lists them, or says
## that no test was skipped.
TEST_PROFILE ?= quick
TEST_BIN      = $(or $(CARGO_TARGET_DIR),target)/$(TEST_PROFILE)
TEST_JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SKIP_LOG      = $(abspath $(TEST_BIN))/skipped-tests.txt
SIMS_LOG      = $(abspath $(TEST_BIN))/cosim-quick-fuzz-short.log
test: lint
	@mkdir -p $(dir $(SKIP_LOG)) && : > $(SKIP_LOG)
	$(CARGO) test --workspace --features bulk/gpu --profile $(TEST_PROFILE) --no-run
	@echo "cosim-quick and fuzz-short run beside the tests, output in $(SIMS_LOG)"
	@MPCGEN_SKIP_LOG=$(SKIP_LOG) $(MAKE) --no-print-directory -j$(TEST_JOBS) -Otarget cosim-quick fuzz-short \
	  COSIM_RUN=$(TEST_BIN)/cosim FUZZ_RUN=$(TEST_BIN)/fuzz > $(SIMS_LOG) 2>&1 & sims=$$!; \
	MPCGEN_SKIP_LOG=$(SKIP_LOG) $(CARGO) test --workspace --features bulk/gpu --profile $(TEST_PROFILE); tests=$$?; \
	wait $$sims; s=$$?; cat $(SIMS_LOG); \
	if [ $$tests -ne 0 ]; then echo "cargo test failed"; fi; \
	if [ $$s -ne 0 ]; then echo "cosim-quick or fuzz-short failed (above)"; fi; \
	[ $$tests -eq 0 ] && [ $$s -eq 0 ]
	@n=$$(sed 's/: .*//' $(SKIP_LOG) | sort -u | wc -l); \
	if [ $$n -eq 0 ]; then echo "no test skipped"; \
	else echo "$$n tests skipped:"; awk '!seen[$$0]++' $(SKIP_LOG); fi

## Fuzzing (fuzz/README.md): every target for FUZZ_SECONDS each, going on
## after findings; findings in fuzz/findings/. fuzz-short: FUZZ_SHORT_SECONDS
## each, ending a target at its first finding. Seeds are cut from CORPUS:
## another CORPUS than ../shared/corpus is passed as --corpus and must be
## usable (else an error); ../shared/corpus is the fuzzer's own default,
## which without the corpus runs on synthetic data and records a skip (an
## error under MPCGEN_REQUIRE_TOOLS=1).
FUZZ_SECONDS       ?= 600
FUZZ_SHORT_SECONDS ?= 10
FUZZ_SEED          ?= 1
# how the fuzz and co-simulation binaries are run (make test runs the ones
# its tests were built with)
FUZZ_RUN           ?= $(CARGO) run --release -p mpcgen-fuzz --
FUZZ_CORPUS         = $(if $(filter ../shared/corpus,$(CORPUS)),,--corpus $(CORPUS))
COSIM_RUN          ?= $(CARGO) run --release -q -p testbench --bin cosim --
fuzz:
	$(FUZZ_RUN) all --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED) --keep-going $(FUZZ_CORPUS)

fuzz-short:
	$(FUZZ_RUN) all --seconds $(FUZZ_SHORT_SECONDS) --seed $(FUZZ_SEED) $(FUZZ_CORPUS)

SHIPPED_SETS ?= $(sort $(dir $(wildcard models/*/model.toml)))
COSIM_BLOCKS ?= 200
COSIM_CORPUS  = $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)

## The co-simulations `make test` runs, a part of cosim-all's (docs/hw/cosim.md,
## "What make test co-simulates"): models/default, every unit on Icarus
## and the compressor and decompressor on Verilator (COSIM_BLOCKS vectors);
## every other shipped set but models/example (which the testbench's
## integration tests co-simulate on both simulators) its compressor and
## decompressor on Icarus (COSIM_QUICK_BLOCKS); MAG-aware BDI 128/32/4
## unsigned every unit on Icarus, the compressor and decompressor of it
## and of 128/16/4 signed on Verilator, and the DPC units on Verilator (the
## integration tests run 128/16/4 signed and DPC on Icarus). Independent
## targets, longest first: `make -j`.
COSIM_QUICK_BLOCKS ?= 100
QUICK_SETS = $(filter-out default example,$(patsubst models/%/,%,$(SHIPPED_SETS)))
cosim-quick: cosim-quick-default cosim-quick-dpc cosim-quick-bdi-unsigned cosim-quick-bdi-signed $(addprefix cosim-quick-set-,$(QUICK_SETS))

cosim-quick-default:
	$(COSIM_RUN) mpc --model models/default --sim icarus --unit all --blocks $(COSIM_BLOCKS) --seed 1 $(COSIM_CORPUS)
	$(COSIM_RUN) mpc --model models/default --sim verilator --unit compressor,decompressor --blocks $(COSIM_BLOCKS) --seed 1 $(COSIM_CORPUS)

cosim-quick-set-%:
	$(COSIM_RUN) mpc --model models/$* --sim icarus --unit compressor,decompressor --blocks $(COSIM_QUICK_BLOCKS) --seed 1 $(COSIM_CORPUS)

cosim-quick-bdi-unsigned:
	$(COSIM_RUN) magbdi --block 128 --mag 32 --base 4 --sim icarus --blocks $(BDI_COSIM_BLOCKS) --seed 1 $(COSIM_CORPUS)
	$(COSIM_RUN) magbdi --block 128 --mag 32 --base 4 --sim verilator --unit compressor,decompressor --blocks $(BDI_COSIM_BLOCKS) --seed 1 $(COSIM_CORPUS)

cosim-quick-bdi-signed:
	$(COSIM_RUN) magbdi --block 128 --mag 16 --base 4 --mode signed --sim verilator --unit compressor,decompressor --blocks $(BDI_COSIM_BLOCKS) --seed 2 $(COSIM_CORPUS)

cosim-quick-dpc:
	$(COSIM_RUN) dpc --sim verilator --unit all --blocks $(DPC_COSIM_BLOCKS) --seed 1 $(COSIM_CORPUS)

## Short co-simulation (compressor, decompressor, loopback) of every shipped
## set on Icarus and Verilator.
cosim-all:
	@for m in $(SHIPPED_SETS); do \
	  echo "== cosim $$m"; \
	  $(COSIM_RUN) mpc --model $$m --sim both --unit all --blocks $(COSIM_BLOCKS) --seed 1 $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus) || exit 1; \
	done
	$(MAKE) cosim-bdi
	$(MAKE) cosim-dpc

## Co-simulation of units with programmable slots (docs/hw/cosim.md, "Units
## with programmable slots"): models/default with every stride form, K = 2
## (stride-lib and stride-colpart-d8: K = 1), compressor, decompressor and
## loopback on Verilator, SLOT_COSIM_BLOCKS blocks each, images reprogrammed
## every 500 blocks; the same units on Icarus with SLOT_COSIM_ICARUS_BLOCKS
## (Icarus runs these large units slowly). Then the same for the
## recommended configuration: models/default-exact, stride-colpart K = 2,
## the 5-stage compressor. About an hour on two cores.
SLOT_COSIM_BLOCKS ?= 20000
SLOT_COSIM_ICARUS_BLOCKS ?= 300
SLOT_FORMS_K ?= stride-part:2 stride-k0-part:2 stride-cols:2 stride-lib:1 stride-colpart:2 stride-colpart-d8:1
cosim-slots:
	@set -e; for fk in $(SLOT_FORMS_K); do f=$${fk%:*}; k=$${fk#*:}; \
	  echo "== cosim models/default --program-slots $$k --slot-form $$f"; \
	  $(COSIM_RUN) mpc --model models/default --program-slots $$k --slot-form $$f --sim verilator --unit all --blocks $(SLOT_COSIM_BLOCKS) --seed 1 --reprogram-every 500 $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus); \
	  $(COSIM_RUN) mpc --model models/default --program-slots $$k --slot-form $$f --sim icarus --unit compressor,decompressor --blocks $(SLOT_COSIM_ICARUS_BLOCKS) --seed 1 --reprogram-every 100 $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus); \
	done
	@echo "== cosim models/default-exact --program-slots 2 --compressor-stages 5"
	$(CARGO) run --release -p hdl --bin gen -- --model models/default-exact --program-slots 2 --slot-form stride-colpart --compressor-stages 5 --out build/cosim-slots-exact5
	$(COSIM_RUN) mpc --model models/default-exact --rtl build/cosim-slots-exact5 --program-slots 2 --slot-form stride-colpart --sim verilator --unit all --blocks $(SLOT_COSIM_BLOCKS) --seed 1 --reprogram-every 500 $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)
	$(COSIM_RUN) mpc --model models/default-exact --rtl build/cosim-slots-exact5 --program-slots 2 --slot-form stride-colpart --sim icarus --unit compressor,decompressor --blocks $(SLOT_COSIM_ICARUS_BLOCKS) --seed 1 --reprogram-every 100 $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)

## Short co-simulation of the MAG-aware BDI units (docs/hw/mag-bdi.md):
## 128-byte blocks, 32-byte MAG unsigned and 16-byte MAG signed, both simulators.
BDI_COSIM_BLOCKS ?= 300
cosim-bdi:
	$(COSIM_RUN) magbdi --block 128 --mag 32 --base 4 --sim both --blocks $(BDI_COSIM_BLOCKS) --seed 1 $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)
	$(COSIM_RUN) magbdi --block 128 --mag 16 --base 4 --mode signed --sim both --blocks $(BDI_COSIM_BLOCKS) --seed 2 $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)

## Short co-simulation of the five DPC units (docs/hw/dpc.md): plain,
## DF-TRUC and DF-MAN compressors, plain and DF-TRUC decompressors, both
## simulators, stalls, backpressure and resets.
DPC_COSIM_BLOCKS ?= 300
cosim-dpc:
	$(COSIM_RUN) dpc --sim both --unit all --blocks $(DPC_COSIM_BLOCKS) --seed 1 $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)

## Every unit at every depth through verilator --lint-only -Wall and the
## IR simulation against the golden model, every shipped model set
## included (make test: the sets other than default and example at their
## default depths only).
every-depth:
	MPCGEN_EVERY_DEPTH=1 $(CARGO) test --profile $(TEST_PROFILE) -p hdl --test lint_every_unit --test mpc_sim

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --features bulk/gpu -- -D warnings
	$(CARGO) clippy -p bulk --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

## Synthesis (docs/hw/synthesis.md): Yosys + OpenSTA on the generated units,
## report in build/<set>/synth/report.md and report.json.
synth:
	$(CARGO) run --release -p synth --bin synth -- --model $(MODEL)

## Area vs number of predictors (1,3,5,7,9) and selection rule:
## build/scaling/report.md (area-only runs; ~10 minutes).
SCALING_MODEL ?= models/extended
synth-scaling:
	$(CARGO) run --release -p synth --bin synth -- --scaling --model $(SCALING_MODEL)

## Power (docs/hw/synthesis.md, "Power"): `unit_synth --power` on the units
## of MODEL (generated into build/<set>/ first), or of the `gen` output
## directory RTL (e.g. RTL=build/bdi-128-32-4; POWER_FLAGS="--abc no-sweep"
## for the DPC units): area, timing, and power at each unit's minimum period
## from a gate-level Icarus run of POWER_BLOCKS corpus blocks; report in
## <rtl>/synth/report.md and report.json. Minutes per unit.
POWER_BLOCKS ?= 200
POWER_FLAGS  ?=
.PHONY: power
power:
	$(CARGO) build --release -p hdl --bin gen -p synth --bin unit_synth
	@set -e; dir="$(RTL)"; \
	if [ -z "$$dir" ]; then \
	  dir=build/$$(sed -n 's/^name = "\(.*\)"/\1/p' $(MODEL)/model.toml | head -1); \
	  ./target/release/gen --model $(MODEL) --out $$dir; \
	fi; \
	echo "unit_synth --rtl $$dir --power"; \
	./target/release/unit_synth --rtl $$dir --power --power-blocks $(POWER_BLOCKS) $(if $(wildcard $(CORPUS)),--corpus $(CORPUS)) $(POWER_FLAGS)

## Programmable slots (docs/spec/program-slots.md): the online protocol
## (`mpc ratio --online K --form F --json`) on every corpus file for every
## slot form and K in PROG_K (and with models/default-exact for
## PROG_EXACT_FORMS), then docs/eval/programmable.md and its charts (about
## five minutes in release mode on 2 cores; not part of `make test`).
PROG_K     ?= 1 2 4
PROG_FORMS ?= full any-part stride-part stride-k0-part stride-cols stride-lib stride-colpart stride-colpart-d8
PROG_EXACT_FORMS ?= full stride-colpart stride-colpart-d8
PROG_DIR   ?= build/programmable
.PHONY: programmable-eval
programmable-eval:
	$(CARGO) build --release -p bulk --bin mpc -p modeling --bin programmable_eval
	mkdir -p $(PROG_DIR)
	set -e; for f in $(PROG_FORMS); do for k in $(PROG_K); do \
	  ./target/release/mpc ratio --model models/default --online $$k --form $$f --json \
	    $(sort $(wildcard $(CORPUS)/*/*.bin)) > $(PROG_DIR)/$$f-$$k.json; \
	done; done
	set -e; for f in $(PROG_EXACT_FORMS); do for k in $(PROG_K); do \
	  ./target/release/mpc ratio --model models/default-exact --online $$k --form $$f --json \
	    $(sort $(wildcard $(CORPUS)/*/*.bin)) > $(PROG_DIR)/exact-$$f-$$k.json; \
	done; done
	./target/release/programmable_eval --model models/default --dir $(PROG_DIR) \
	  --ks $(shell echo $(PROG_K) | tr ' ' ',') --out docs/eval/programmable

## Gain of programmable slots against hardware cost (docs/eval/programmable-hw.md,
## docs/hw/program-slots.md): for each set in PROG_HW_SETS the hard-wired
## units and, for each FORM-K in PROG_HW_POINTS (PROG_HW_EXACT_POINTS for
## the *-exact sets, whose compressors with slots get 5 stages for the
## exact rule's scores), `gen --program-slots K --slot-form FORM` into
## PROG_HW_DIR/SET/FORM-K/ and `unit_synth PROG_HW_SYNTH` on it (a report
## already there is kept: delete the directory to redo it); then the table
## and chart from those reports and the runs of `make programmable-eval`.
## Hours on two cores with the timing flow; not part of `make test`.
PROG_HW_SETS   ?= default default-exact
PROG_HW_POINTS ?= stride-lib-1 stride-lib-2 stride-lib-4 stride-cols-1 stride-cols-2 stride-cols-4 stride-k0-part-2 stride-colpart-1 stride-colpart-2 stride-colpart-4 stride-colpart-d8-2
PROG_HW_EXACT_POINTS ?= stride-colpart-1 stride-colpart-2 stride-colpart-4
PROG_HW_SYNTH  ?=
PROG_HW_DIR    ?= build/slots
.PHONY: programmable-hw
programmable-hw:
	$(CARGO) build --release -p hdl --bin gen -p synth --bin unit_synth -p modeling --bin programmable_hw
	set -e; for s in $(PROG_HW_SETS); do \
	  d=$(PROG_HW_DIR)/$$s; \
	  ./target/release/gen --model models/$$s --out $$d/hard-wired; \
	  [ -f $$d/hard-wired/synth/report.json ] || ./target/release/unit_synth --rtl $$d/hard-wired $(PROG_HW_SYNTH); \
	  case $$s in *-exact) pts="$(PROG_HW_EXACT_POINTS)"; c="--compressor-stages 5";; *) pts="$(PROG_HW_POINTS)"; c="";; esac; \
	  for p in $$pts; do f=$${p%-*}; k=$${p##*-}; \
	    ./target/release/gen --model models/$$s --program-slots $$k --slot-form $$f $$c --out $$d/$$p; \
	    [ -f $$d/$$p/synth/report.json ] || ./target/release/unit_synth --rtl $$d/$$p $(PROG_HW_SYNTH); \
	  done; \
	done
	./target/release/programmable_hw --model models/default --dir $(PROG_DIR) \
	  --synth $(PROG_HW_DIR) --out docs/eval/programmable-hw

## Ratio against area over the predictor count K and both selection rules
## (docs/eval/label-free.md): train every set without labels into
## build/curve/sets/, generate and synthesise it (area only, ABC without SAT
## sweeping; the exact-selection sets share their decompressor with the
## zero-run ones, so only their compressor is synthesised), then
## docs/eval/label-free-curve.{md,png}. Hours on two cores: the synthesis of
## a unit grows to ~20 minutes at K = 32.
CURVE_K   ?= 1 2 3 5 8 12 16 24 32
CURVE_DIR ?= build/curve
curve:
	$(CARGO) build --release -p modeling --bin train --bin curve -p hdl --bin gen -p synth --bin unit_synth
	set -e; for k in $(CURVE_K); do for r in zero-run exact; do \
	  d=$(CURVE_DIR)/sets/$$r-$$k; \
	  [ -f $$d/model.toml ] || ./target/release/train --corpus $(CORPUS) --out $$d --name auto$$k-$$r --predictors $$k --selection $$r; \
	  ./target/release/gen --model $$d --out $(CURVE_DIR)/rtl/$$r-$$k; \
	  u=; [ $$r = exact ] && u="--unit mpc_compressor"; \
	  [ -f $(CURVE_DIR)/rtl/$$r-$$k/synth/report-no-sweep.json ] || ./target/release/unit_synth --rtl $(CURVE_DIR)/rtl/$$r-$$k --area-only --abc no-sweep $$u; \
	done; done
	./target/release/gen --model $(MODEL) --out $(CURVE_DIR)/rtl/$(notdir $(MODEL))
	[ -f $(CURVE_DIR)/rtl/$(notdir $(MODEL))/synth/report-no-sweep.json ] || ./target/release/unit_synth --rtl $(CURVE_DIR)/rtl/$(notdir $(MODEL)) --area-only --abc no-sweep
	./target/release/curve --corpus $(CORPUS) --rtl $(CURVE_DIR)/rtl --reference $(MODEL) \
	  $(foreach k,$(CURVE_K),--set $(CURVE_DIR)/sets/zero-run-$(k) --set $(CURVE_DIR)/sets/exact-$(k)) \
	  --out docs/eval/label-free-curve

## Co-simulation (docs/hw/cosim.md): the generated units of MODEL against the
## golden model on SIM (icarus | verilator | both), UNIT (compressor |
## decompressor | loopback | all), BLOCKS vectors per unit (default 1000000
## on Verilator, 10000 otherwise), with stalls and mid-stream resets.
SIM     ?= verilator
UNIT    ?= all
SEED    ?= 1
BLOCKS  ?= $(if $(filter verilator,$(SIM)),1000000,10000)
sim:
	$(CARGO) run --release -p testbench --bin cosim -- mpc --model $(MODEL) --sim $(SIM) --unit $(UNIT) --blocks $(BLOCKS) --seed $(SEED) $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)

## Short co-simulation of every unit on both simulators (what CI runs).
cosim:
	$(CARGO) run --release -p testbench --bin cosim -- mpc --model $(MODEL) --sim both --unit all --blocks 3000 --seed $(SEED) $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)

## Mutation testing (docs/hw/cosim.md): every single mutation of the MPC
## compressor and decompressor of MODEL, the MAG-aware BDI units (128/32/4
## unsigned, 128/16/4 signed) and the five DPC units, each co-simulated on
## Verilator on MUTATE_BLOCKS vectors (BDI: MUTATE_BDI_BLOCKS, enough for
## every pair of uncovered positions at every delta width: 1,488 pairs for
## 128/32/4, 3,472 for 128/16/4); survivors decided formally; reports
## in build/<config>/mutate/report.md; fails when a mutant stays open.
## MUTATE_SAMPLE=N draws N mutants per unit instead of all (models/default:
## 22,861 compressor and 17,055 decompressor mutations; BDI 128/32/4:
## 13,561 and 1,207; BDI 128/16/4 signed: 34,690 and 3,011; DPC: 5,475 to
## 6,922 per unit).
MUTATE_BLOCKS     ?= 2000
MUTATE_BDI_BLOCKS ?= 8000
MUTATE_SAMPLE     ?=
MUTATE_ARGS        = --sim verilator --seed $(SEED) $(if $(MUTATE_SAMPLE),--sample $(MUTATE_SAMPLE)) $(if $(wildcard $(CORPUS)),--corpus $(CORPUS),--no-corpus)
mutate:
	$(CARGO) run --release -p testbench --bin cosim -- mutate --design mpc --model $(MODEL) --unit all --blocks $(MUTATE_BLOCKS) $(MUTATE_ARGS)
	$(CARGO) run --release -p testbench --bin cosim -- mutate --design magbdi --block 128 --mag 32 --base 4 --unit all --blocks $(MUTATE_BDI_BLOCKS) $(MUTATE_ARGS)
	$(CARGO) run --release -p testbench --bin cosim -- mutate --design magbdi --block 128 --mag 16 --base 4 --mode signed --unit all --blocks $(MUTATE_BDI_BLOCKS) $(MUTATE_ARGS)
	$(CARGO) run --release -p testbench --bin cosim -- mutate --design dpc --unit all --blocks $(MUTATE_BLOCKS) $(MUTATE_ARGS)

## Every control mutation (pipeline control, enables, reset values) of the
## same units: a few minutes; a sampled `make mutate` holds few of them.
## Reports in build/<config>/mutate/control-report.md.
mutate-control:
	$(CARGO) run --release -p testbench --bin cosim -- mutate --control --design mpc --model $(MODEL) --unit all --blocks $(MUTATE_BLOCKS) $(MUTATE_ARGS)
	$(CARGO) run --release -p testbench --bin cosim -- mutate --control --design magbdi --block 128 --mag 32 --base 4 --unit all --blocks $(MUTATE_BDI_BLOCKS) $(MUTATE_ARGS)
	$(CARGO) run --release -p testbench --bin cosim -- mutate --control --design magbdi --block 128 --mag 16 --base 4 --mode signed --unit all --blocks $(MUTATE_BDI_BLOCKS) $(MUTATE_ARGS)
	$(CARGO) run --release -p testbench --bin cosim -- mutate --control --design dpc --unit all --blocks $(MUTATE_BLOCKS) $(MUTATE_ARGS)

## Throughput benchmarks of the golden codecs over the corpus.
## Formal round trip and depth variants of the MPC units of MODEL on their
## combinational views (docs/hw/formal.md); exit 0 only when proven.
prove:
	$(CARGO) run --release -p testbench --bin cosim -- prove mpc --model $(MODEL)

## The same for every shipped model set (stops at the first not proven).
prove-all:
	set -e; for m in models/*/; do $(CARGO) run --release -p testbench --bin cosim -- prove mpc --model $${m%/}; done

## Formal round trips and depth variants of the MAG-aware BDI units
## (128-byte blocks, MAG 16, 32 and 64 bytes, 4-byte base, unsigned and
## signed, compressor depths 1 and 2) and of the five DPC units (default
## geometry, decompressor depths 2 and 3) (docs/hw/formal.md; stops at the
## first not proven).
prove-bdi-dpc:
	set -e; for mag in 16 32 64; do for mode in unsigned signed; do for c in 1 2; do \
	  $(CARGO) run --release -p testbench --bin cosim -- prove magbdi --block 128 --mag $$mag --base 4 --mode $$mode --compressor-stages $$c; \
	done; done; done
	set -e; for d in 2 3; do $(CARGO) run --release -p testbench --bin cosim -- prove dpc --decompressor-stages $$d; done

## The GPU engine on this machine's GPU (llvmpipe where there is none):
## mpc bench --gpu on a GPU_BENCH_MIB stream (default 1024), then compress /
## decompress --engine gpu file to file checked with cmp; every figure and log
## in GPU_BENCH_OUT (default build/gpu-bench). See docs/bulk-codec.md.
gpu-bench:
	bash scripts/gpu-bench.sh

bench:
	$(CARGO) bench -p golden --bench codec -- $(MODEL) $(CORPUS)

ratio:
	$(CARGO) run --release -p bulk --bin mpc -- ratio --model $(MODEL) $(wildcard $(CORPUS)/*/*.bin)

clean:
	$(CARGO) clean
	rm -rf build
