# The two commands of the README, plus the benchmarks. Each installs what is
# missing, configures and builds first.
BUILD_DIR ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

.PHONY: run test bench build deps bench-deps clean

run: build
	$(BUILD_DIR)/toolvfs doctor
	@echo
	@echo '$$ toolvfs grep -n "def |TODO" --project examples/project'
	$(BUILD_DIR)/toolvfs grep 'def |TODO' --project examples/project

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

bench: bench-deps build
	$(BUILD_DIR)/bench/grep_bench

build: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS); fi
	cmake --build $(BUILD_DIR) -j$(JOBS)

deps:
	@scripts/install-deps.sh

bench-deps:
	@scripts/install-deps.sh --bench

clean:
	rm -rf $(BUILD_DIR)
