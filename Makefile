# kiln: the two commands a new machine needs are `make demo` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
DEMO_CONFIG ?= configs/examples/fashion_mnist/cnn.yaml

.PHONY: all deps build test test-asan demo format format-check clean fuzz fuzz-build fuzz-short

all: build

deps:
	bash scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build format-check
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) fuzz-short

# The suite again under AddressSanitizer and UndefinedBehaviorSanitizer, less the few tests labelled
# `heavy` in CMakeLists.txt (docs/reliability.md).
ASAN_DIR ?= build-asan
# Leak checks on (ASan's default), no suppressions: the suite runs clean without any. UB reports
# come with their stack.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

$(ASAN_DIR)/build.ninja: CMakeLists.txt
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_SANITIZE=ON $(CMAKE_FLAGS)

test-asan: deps $(ASAN_DIR)/build.ninja
	cmake --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS) -LE heavy

demo: build
	bash scripts/demo.sh $(BUILD_DIR)/kiln $(DEMO_CONFIG)

format:
	git ls-files '*.h' '*.cpp' | xargs clang-format -i

format-check:
	@git ls-files '*.h' '*.cpp' | xargs clang-format --dry-run -Werror
	@echo "format-check: ok"

# Fuzzing (tests/fuzz/README.md): a clang build of the torch-free parsers in its own folder.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 600
# Targets fuzzed at once; each takes a core.
FUZZ_PARALLEL ?= 1
# A long run keeps going past what it finds (each finding is saved under $(FUZZ_DIR)/fuzz).
FUZZ_FLAGS ?= -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
FUZZ_TARGETS = $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.cpp)))

$(FUZZ_DIR)/build.ninja: CMakeLists.txt tests/fuzz/CMakeLists.txt
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKILN_FUZZ=ON

fuzz-build: deps $(FUZZ_DIR)/build.ninja
	cmake --build $(FUZZ_DIR) -j $(JOBS)

# Every target for FUZZ_SECONDS; new corpus entries, findings and logs stay in $(FUZZ_DIR)/fuzz.
fuzz: fuzz-build
	printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(FUZZ_PARALLEL) -I{} \
	  bash tests/fuzz/run.sh $(FUZZ_DIR)/{} $(FUZZ_SECONDS) $(FUZZ_DIR)/fuzz $(FUZZ_FLAGS)

# Each target for KILN_FUZZ_SHORT_SECONDS (15) from its seeds, and over its past findings.
fuzz-short: fuzz-build
	cd $(FUZZ_DIR) && ctest -L fuzz -j 2 --output-on-failure

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)
