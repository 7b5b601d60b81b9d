# Top-level entry points. `make setup run` on a fresh Debian machine installs
# the tools and runs the main job; `make test` runs every test.

MODEL   ?= models/example
CORPUS  ?= ../shared/corpus
CARGO   ?= cargo

.PHONY: all setup run test lint fmt bench ratio clean

all: run

## Install the simulators and synthesis tools (Debian; needs root or sudo).
setup:
	bash .ci/install-tools

## The main job on the shipped default model set.
run:
	$(CARGO) build --release --workspace
	$(CARGO) run --release -p golden --bin mpc -- ratio --verify --model $(MODEL) $(wildcard $(CORPUS)/*/*.bin)

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
