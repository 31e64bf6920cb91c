# The two commands of the README, plus the benchmarks. Each installs what is
# missing, configures and builds first.
BUILD_DIR ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

.PHONY: run test bench fuzz build build-run configure deps bench-deps clean install package

# The main job: the example project's tools, one of each runtime — vfs
# tools whose every file access goes through the host, decided by the
# tool's policy (examples/project/toolvfs.toml) and recorded in the audit
# log; a stdio tool confined by the OS sandbox; a builtin; an MCP server's
# tool. Builds only what it runs: the binary and the example tools.
run: build-run
	@echo '$$ toolvfs tools --project examples/project'
	@$(BUILD_DIR)/toolvfs tools --project examples/project
	@echo
	@echo '$$ toolvfs check --project examples/project   # the policy each tool runs under'
	@$(BUILD_DIR)/toolvfs check --project examples/project
	@echo
	@echo '$$ toolvfs run todo_report --project examples/project'
	@$(BUILD_DIR)/toolvfs run todo_report --project examples/project
	@echo
	@echo '$$ toolvfs run rename_symbol --project examples/project --args '"'"'{"from": "LinkStore", "to": "SlugStore", "dry_run": true}'"'"
	@$(BUILD_DIR)/toolvfs run rename_symbol --project examples/project --args '{"from": "LinkStore", "to": "SlugStore", "dry_run": true}'
	@echo
	@echo '$$ toolvfs run access_summary --project examples/project   # a jp-style stdio tool, confined by the OS sandbox'
	@$(BUILD_DIR)/toolvfs run access_summary --project examples/project
	@echo
	@echo '$$ toolvfs run list_directory --project examples/project --args '"'"'{"path": "shortlink"}'"'"'   # a builtin tool'
	@$(BUILD_DIR)/toolvfs run list_directory --project examples/project --args '{"path": "shortlink"}'
	@echo
	@echo '$$ toolvfs run outline --project examples/project --args '"'"'{"path": "shortlink/store.py"}'"'"'   # a tool of an MCP server'
	@$(BUILD_DIR)/toolvfs run outline --project examples/project --args '{"path": "shortlink/store.py"}'
	@echo
	@echo '$$ toolvfs audit --project examples/project | tail -n 8   # every request, decided and recorded'
	@$(BUILD_DIR)/toolvfs audit --project examples/project | tail -n 8

# Installs the binary, libtoolvfs with its headers, CMake package and
# pkg-config file, the SDKs, man page and completions (docs/install.md).
# DESTDIR works as usual for staging.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX) --strip

# Two .debs in $(BUILD_DIR)/packages: toolvfs and libtoolvfs-dev.
package: build
	cd $(BUILD_DIR) && cpack -G DEB

# The MCP client tests need the reference servers (npm, into a cache dir).
test: build
	scripts/install-mcp-servers.sh
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

# Reconfigures first: --bench installs packages (nlohmann-json for
# json_bench) that an earlier configure did not find. protocol_bench also
# measures the MCP filesystem server, for scale (npm, as for the tests).
# PROTOCOL_BENCH_FLAGS=--quick: fewer rounds and round trips (docs/benchmarks.md).
PROTOCOL_BENCH_FLAGS ?=
# SPAWN_BENCH_FLAGS=--quick: 3 rounds of 100 starts per variant.
SPAWN_BENCH_FLAGS ?=
# STORE_BENCH_FLAGS=--large: snapshots of 100,000 files too; --agentfs-files 1000: a shorter AgentFS run.
STORE_BENCH_FLAGS ?=
bench: bench-deps
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j$(JOBS)
	$(BUILD_DIR)/bench/grep_bench
	$(BUILD_DIR)/bench/read_bench
	$(BUILD_DIR)/bench/protocol_bench $(PROTOCOL_BENCH_FLAGS)
	$(BUILD_DIR)/bench/session_bench
	$(BUILD_DIR)/bench/spawn_bench $(SPAWN_BENCH_FLAGS)
	$(BUILD_DIR)/bench/policy_bench
	$(BUILD_DIR)/bench/store_bench $(STORE_BENCH_FLAGS)
	$(BUILD_DIR)/bench/sync_back_bench
	$(BUILD_DIR)/bench/vfsd_bench --toolvfs $(BUILD_DIR)/toolvfs
	@if [ -x $(BUILD_DIR)/bench/json_bench ]; then $(BUILD_DIR)/bench/json_bench; fi

# Each fuzzer runs FUZZ_SECONDS under ASan and UBSan (any undefined behavior
# aborts, so libFuzzer reports it like a crash); findings are written to
# build-fuzz/. Every fuzzer runs even if an earlier one found something; the
# target fails at the end naming those that did. Each keeps its corpus in
# build-fuzz/corpus/NAME across runs and starts from fuzz/seeds/NAME, if
# there is one (read only: new inputs go to the corpus).
FUZZ_SECONDS ?= 60
FUZZERS ?= path_fuzzer ignore_fuzzer grep_pattern_fuzzer config_fuzzer jsonrpc_fuzzer url_fuzzer audit_record_fuzzer \
  vfsd_frame_fuzzer session_path_fuzzer workspace_uri_fuzzer
FUZZ_SANITIZERS = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
  -fsanitize-ignorelist=$(CURDIR)/fuzz/sanitizer_ignorelist.txt
fuzz:
	@scripts/install-deps.sh --fuzz
	@if [ ! -f build-fuzz/build.ninja ]; then \
	  cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
	    -DCMAKE_CXX_FLAGS='$(FUZZ_SANITIZERS)' \
	    -DTOOLVFS_BUILD_FUZZERS=ON -DTOOLVFS_BUILD_TESTS=OFF -DTOOLVFS_BUILD_BENCH=OFF; fi
	cmake --build build-fuzz -j$(JOBS) --target $(FUZZERS)
	@cd build-fuzz && failed=; for fuzzer in $(FUZZERS); do \
	  mkdir -p corpus/$$fuzzer; seeds=; [ -d ../fuzz/seeds/$$fuzzer ] && seeds=../fuzz/seeds/$$fuzzer; \
	  ./fuzz/$$fuzzer -max_total_time=$(FUZZ_SECONDS) -max_len=4096 corpus/$$fuzzer $$seeds || failed="$$failed $$fuzzer"; done; \
	  if [ -n "$$failed" ]; then echo "fuzz: findings from:$$failed (see build-fuzz/)"; exit 1; fi

configure: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS); fi

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

# The targets `make run` uses (not the tests and benchmarks).
RUN_TARGETS = toolvfs todo_report
build-run: configure
	cmake --build $(BUILD_DIR) -j$(JOBS) --target $(RUN_TARGETS)

deps:
	@scripts/install-deps.sh

bench-deps:
	@scripts/install-deps.sh --bench
	@scripts/install-mcp-servers.sh
	@scripts/install-agentfs.sh || echo "bench-deps: AgentFS not installed; store_bench skips it"

clean:
	rm -rf $(BUILD_DIR)
