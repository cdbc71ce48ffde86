# Convenience targets around the CMake build (see README.md).
BUILD ?= build
JOBS ?= 2

.PHONY: deps build example test test-asan bench clean

deps:
	@bash scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

# Anonymizes the bundled Adult example and prints the summary.
example: build
	./$(BUILD)/anonkit anonymize --job examples/adult/job.json -o $(BUILD)/adult-anonymized.csv --report $(BUILD)/adult-report.json
	./$(BUILD)/anonkit check $(BUILD)/adult-anonymized.csv --job examples/adult/job.json

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

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
	rm -rf $(BUILD) $(BUILD)-asan
