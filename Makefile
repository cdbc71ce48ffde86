# Convenience targets around the CMake build (see README.md).
BUILD ?= build
JOBS ?= 2

.PHONY: deps build example install test test-asan test-fuzz fuzz bench clean example-report

deps:
	@bash scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

# Anonymizes the bundled Adult example and prints the summary.
example: build
	./$(BUILD)/anonkit anonymize --job examples/adult/job.json -o $(BUILD)/adult-anonymized.csv --report $(BUILD)/adult-report.json
	./$(BUILD)/anonkit check $(BUILD)/adult-anonymized.csv --job examples/adult/job.json

# The HTML release report of the Adult example (Mondrian, distinct 3-diversity),
# into $(BUILD)/adult-release.html (docs/report.md).
example-report: build
	./$(BUILD)/anonkit anonymize --job examples/adult/job.json -o $(BUILD)/adult-anonymized.csv \
		--report $(BUILD)/adult-report.json --html $(BUILD)/adult-release.html
	@echo "wrote $(BUILD)/adult-release.html"

# Installs the library (shared and static), its headers, anonkit.pc, the CMake
# package and the command line under PREFIX (DESTDIR is honoured).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)
	$(MAKE) --no-print-directory test-fuzz

# The fuzz harnesses of tests/fuzz, built with clang's libFuzzer under ASan +
# UBSan, each run over its seeds and FUZZ_RUNS more inputs.
FUZZ_RUNS ?= 20000
test-fuzz:
	@bash scripts/deps.sh fuzz
	cmake -S . -B $(BUILD)-fuzz -DCMAKE_C_COMPILER=clang-14 -DCMAKE_BUILD_TYPE=Debug -DANONKIT_FUZZ=ON \
		-DFUZZ_RUNS=$(FUZZ_RUNS) >/dev/null
	cmake --build $(BUILD)-fuzz -j$(JOBS)
	ctest --test-dir $(BUILD)-fuzz --output-on-failure -j$(JOBS)

# Longer fuzzing: each harness for FUZZ_SECONDS, its corpus kept in
# $(BUILD)-fuzz/corpus; a crash leaves its input in $(BUILD)-fuzz.
FUZZ_SECONDS ?= 300
fuzz: test-fuzz
	for f in $(BUILD)-fuzz/fuzz_*; do \
		n=$$(basename $$f); \
		(cd $(BUILD)-fuzz && ./$$n -max_total_time=$(FUZZ_SECONDS) -max_len=4096 corpus/$$n $(CURDIR)/tests/fuzz/seeds/$$n) || exit 1; \
	done

# The whole suite once more under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DANONKIT_SANITIZE=ON >/dev/null
	cmake --build $(BUILD)-asan -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir $(BUILD)-asan --output-on-failure -j$(JOBS)

bench: build
	bash bench/bench_mondrian.sh $(BUILD)
	bash bench/bench_workload.sh $(BUILD)
	bash bench/bench_generate.sh $(BUILD)
	bash bench/bench_rothko.sh $(BUILD)
	bash bench/bench_rothko_s.sh $(BUILD)
	bash bench/bench_sequential.sh $(BUILD)
	bash bench/bench_onedim.sh $(BUILD)
	bash bench/bench_incognito.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-fuzz
