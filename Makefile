# tcplab: `make` installs everything and runs paper 000's quick sweep with its report; `make test` runs every test.

PYTHON ?= python3
DEBIAN_PACKAGES := ns2 hyperfine time valgrind chromium iperf3 iputils-ping ethtool tshark clang bpftool libbpf-dev

.PHONY: all install deps python main test test-rust test-python bench clean

all: install main

install: deps python

# Debian packages: ns-2.35 (the peer the benchmark runs), hyperfine, GNU time and valgrind
# (measuring: bench/engine_cost.py counts instructions with callgrind);
# chromium (headless: the report's test opens the HTML offline); iperf3, ping and ethtool (the
# emulated testbed, tcplab.testbed); tshark (reads back the pcap files of `tcplab sim --pcap`).
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@command -v cargo >/dev/null || { echo "tcplab: error: cargo (Rust >= 1.85) is required to build the engine" >&2; exit 2; }

# The Python package with its Rust engine (maturin builds crates/tcplab-py in release mode), and
# the testbed's router (target/release/tcplab-router, found by tcplab.testbed).
python:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e ".[test]"
	cargo build --release --quiet -p tcplab-router

# Paper 000's quick sweep (96 runs of 100 s, a few minutes on 2 cores) and its HTML report; while
# the engine lacks a variant the sweep needs ('tcplab variants'), the reference scenario instead.
QUICK ?= experiments/paper000-quick.toml
QUICK_NAME := $(basename $(notdir $(QUICK)))

main:
	tcplab run $(QUICK)
	tcplab report results/$(QUICK_NAME).duckdb --out results/$(QUICK_NAME).html

test: install test-rust test-python

# Rust tests: optimised, without fat LTO (Cargo.toml's release-test profile).
test-rust:
	cargo test --profile release-test -p tcplab-sim -p tcplab-router

test-python:
	$(PYTHON) -m pytest -q -rs --durations=15 tests

bench: install
	$(PYTHON) bench/reference.py

clean:
	cargo clean
	rm -rf python/tcplab/_core*.so .pytest_cache
