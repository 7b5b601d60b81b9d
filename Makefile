# Top-level entry points. `make setup run` on a fresh Debian machine installs
# the tools and runs the main job; `make test` runs every test.

MODEL   ?= models/default
CORPUS  ?= ../shared/corpus
CARGO   ?= cargo

.PHONY: all setup run gen test lint fmt bench ratio clean

all: run

## Install the simulators and synthesis tools (Debian; needs root or sudo).
setup:
	bash .ci/install-tools

## The main job on the shipped default model set: generate the RTL into
## build/<set>/, lint it, and report the set's compression ratio on the corpus.
run: gen
	$(CARGO) run --release -p golden --bin mpc -- ratio --verify --model $(MODEL) $(wildcard $(CORPUS)/*/*.bin)

## Generate the compressor and decompressor Verilog for MODEL and lint it.
gen:
	$(CARGO) run --release -p hdl --bin gen -- --model $(MODEL)
	@dir=build/$$(sed -n 's/^name = "\(.*\)"/\1/p' $(MODEL)/model.toml | head -1); \
	if command -v verilator >/dev/null; then \
	  for f in $$dir/mpc_compressor.v $$dir/mpc_decompressor.v; do verilator --lint-only -Wall $$f && echo "verilator -Wall: $$f clean"; done; \
	else echo "verilator not found: sudo apt-get install verilator (or make setup)"; fi

## Every test: formatting, lints, unit/property/integration tests.
test: lint
	$(CARGO) test --workspace

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

## Throughput benchmarks of the golden codecs over the corpus.
bench:
	$(CARGO) bench -p golden --bench codec -- $(MODEL) $(CORPUS)

ratio:
	$(CARGO) run --release -p golden --bin mpc -- ratio --model $(MODEL) $(wildcard $(CORPUS)/*/*.bin)

clean:
	$(CARGO) clean
	rm -rf build
