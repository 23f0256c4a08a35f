# s2s — build, tests, sanitizers, benchmarks.
#   make          build ./s2s
#   make test     unit, gradient-check and end-to-end tests (Criterion)
#   make asan     the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench    benchmarks against the PyTorch reference (not part of test)
#   make fuzz     libFuzzer targets fuzz/*.c (clang, ASan+UBSan) in build/fuzz/ (not part of test)
#   make MPI=1    ./s2s with MPI (mpicc, -DS2S_MPI) from build/mpi/: data-parallel training
#   make test-mpi the MPI tests (tests/mpi/) under mpirun; builds with MPI=1
#   make asan-mpi the MPI tests with an MPI build under ASan + UBSan
#   make man      the manual pages (build/release/man/) and the bash completion
#   make lib      the library for programs (include/s2s.h): libs2s.so.0 and libs2s.a in
#                 build/release/lib/
#   make install  ./s2s, the pages, the completion, the docs, the library with its header,
#                 s2s.pc and the Python module under PREFIX (/usr/local), staged under
#                 DESTDIR when given; make uninstall removes them
#   make deb      the Debian packages s2s, libs2s0, libs2s-dev and python3-s2s in build/deb/
#                 (debhelper: debian/, scripts/build-deb.sh), checked by lintian when installed

PKGS      := openblas libutf8proc libedit zlib libmicrohttpd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CC       ?= cc
OPT      ?= -O2 -g
SAN      ?=
BUILD    ?= build/release
BIN      ?= s2s

# MPI=1: the same sources compiled by mpicc with S2S_MPI (train/dist.c then calls MPI)
# into a build directory of their own, never mixed with the default build's objects.
ifeq ($(MPI),1)
CC       := mpicc
BUILD    := build/mpi
CFLAGS   += -DS2S_MPI
endif
PYTHON   ?= /usr/bin/python3
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -ffp-contract=off -Wall -Wextra -Wshadow -Wno-unused-parameter \
             $(OPT) $(SAN) -Iinclude -Isrc $(PKG_CFLAGS) -MMD -MP $(CFLAGS)
LDLIBS_ALL = $(SAN) $(PKG_LIBS) -lm -lpthread $(LDLIBS)
# oneDNN is opened on first use (nn/bf16.c). Under the sanitizers it is linked as well, so
# that dlopen finds it loaded: LeakSanitizer crashes ("Tracer caught signal 11") scanning
# the thread-local storage of libraries that dlopen brought in, once their threads ran.
ifneq ($(SAN),)
LDLIBS_ALL += -Wl,--no-as-needed -ldnnl -Wl,--as-needed
endif

LIB_SRC  := $(sort $(filter-out src/main.c,$(shell find src -name '*.c')))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
# tests/library/ holds programs that tests build against an installed copy of the library
TEST_SRC := $(sort $(filter-out tests/gradcheck/% tests/mpi/% tests/library/%,$(shell find tests -name '*.c')))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(BUILD)/s2s-tests

# The fuzz targets (fuzz/NAME.c; `make fuzz` below builds them with libFuzzer). Each is
# also linked by $(CC), in this build's flags, with fuzz/replay.c into
# $(BUILD)/fuzz-replay/NAME, which runs the target's checks on fixed inputs: the tests
# (tests/cli/test_fuzz_seeds.c) replay every committed seed of fuzz/seeds/NAME with it,
# under ASan and UBSan in `make asan`.
FUZZ_TARGETS ?= corpus gz_corpus tokenize vocab json model_file bpe ids serve_request constraints serve_form parallel state
REPLAY_BIN   := $(FUZZ_TARGETS:%=$(BUILD)/fuzz-replay/%)

# Gradient checks: the engine and model sources (float in libs2s.a) are compiled a
# second time with real = double into $(BUILD)/double/ and linked, with the base
# objects and tests/gradcheck/, into a second Criterion binary.
NUM_SRC  := $(sort $(filter-out src/model/file.c src/model/match.c src/model/ct2_export.c,$(shell find src/nn src/model -name '*.c' 2>/dev/null)))
BASE_OBJ := $(filter $(BUILD)/src/base/%,$(LIB_OBJ))
GC_SRC   := $(sort $(shell find tests/gradcheck -name '*.c' 2>/dev/null))
GC_OBJ   := $(NUM_SRC:%.c=$(BUILD)/double/%.o) $(GC_SRC:%.c=$(BUILD)/double/%.o)
GC_BIN   := $(BUILD)/s2s-gradcheck

# The engine's inner loops (and the optimiser's) are written to vectorise; have the
# compiler do so at -O2. -fno-trapping-math lets it evaluate both sides of the
# branch-free selects in nn/real.h's exp and tanh (s2s never reads floating-point
# exception flags); results are unchanged.
NUM_CFLAGS := -ftree-vectorize -fvect-cost-model=dynamic -fno-trapping-math -fno-math-errno
VEC_OBJ    := $(NUM_SRC:%.c=$(BUILD)/%.o) $(NUM_SRC:%.c=$(BUILD)/double/%.o) $(BUILD)/src/train/optim.o \
              $(NUM_SRC:%.c=$(BUILD)/pic/%.o)
$(VEC_OBJ): CFLAGS_ALL += $(NUM_CFLAGS)

.PHONY: all test test-mpi asan asan-mpi bench clean check-deps fuzz fuzz-targets fuzz-run fuzz-seeds fuzz-syntax man install uninstall lib deb
all: $(BIN)

check-deps:
	@pkg-config --exists $(PKGS) && test -f /usr/include/oneapi/dnnl/dnnl.h || { echo "s2s: missing libraries; install them with:"; \
	  echo "  sudo apt-get install -y build-essential pkg-config libopenblas-dev libutf8proc-dev libcriterion-dev libedit-dev zlib1g-dev libmicrohttpd-dev libdnnl-dev"; exit 1; }

$(BUILD)/libs2s.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# $(BIN) records the build it was linked from, so that `make` after `make MPI=1` (or
# the other way round) links it again although it is newer than the objects.
BIN_FROM := build/.from-$(subst /,_,$(BIN))
$(BIN): $(BUILD)/src/main.o $(BUILD)/libs2s.a $(if $(filter-out $(BUILD),$(shell cat $(BIN_FROM) 2>/dev/null)),FORCE) | check-deps
	$(CC) -o $@ $(filter %.o %.a,$^) $(LDLIBS_ALL)
	@mkdir -p build && echo $(BUILD) > $(BIN_FROM)

.PHONY: FORCE
FORCE:

# The library for programs (include/s2s.h, docs/library.md): the modules below the
# commands (the layers up to api/, scripts/check-layers.sh), compiled a second time as position-independent code into $(BUILD)/pic/, then
# linked into $(LIB_DIR)/libs2s.so.VERSION (SONAME libs2s.so.MAJOR; only the s2s_*
# functions exported, src/api/libs2s.map) and $(LIB_DIR)/libs2s.a (one object whose
# only global symbols are the s2s_* functions, so that the internal names never clash
# with a program's). The version is the header's.
LIB_VERSION := $(shell sed -n 's/^\#define S2S_VERSION_STRING "\(.*\)"/\1/p' include/s2s.h)
LIB_MAJOR   := $(firstword $(subst ., ,$(LIB_VERSION)))
LIB_DIR     := $(BUILD)/lib
LIB_SHARED  := $(LIB_DIR)/libs2s.so.$(LIB_VERSION)
LIB_STATIC  := $(LIB_DIR)/libs2s.a
LIB_PKGS    := openblas libutf8proc zlib
LIB_MODULES := base text nn eval model data decode api
API_SRC     := $(foreach m,$(LIB_MODULES),$(filter src/$(m)/%,$(LIB_SRC)))
PIC_OBJ     := $(API_SRC:%.c=$(BUILD)/pic/%.o)

lib: $(LIB_SHARED) $(LIB_STATIC) $(LIB_DIR)/s2s.pc.in

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -c -o $@ $<

$(LIB_SHARED): $(PIC_OBJ) src/api/libs2s.map
	rm -f $(filter-out $@,$(wildcard $(LIB_DIR)/libs2s.so.*.*.*))
	@mkdir -p $(LIB_DIR)
	$(CC) -shared -Wl,-soname,libs2s.so.$(LIB_MAJOR) -Wl,--version-script=src/api/libs2s.map \
	  -Wl,--no-undefined -o $@ $(PIC_OBJ) $(SAN) $(shell pkg-config --libs $(LIB_PKGS)) -lm -lpthread $(LDLIBS)
	ln -sf $(notdir $@) $(LIB_DIR)/libs2s.so.$(LIB_MAJOR)
	ln -sf libs2s.so.$(LIB_MAJOR) $(LIB_DIR)/libs2s.so

$(LIB_STATIC): $(PIC_OBJ)
	@mkdir -p $(LIB_DIR)
	$(CC) -r -nostdlib -o $(LIB_DIR)/libs2s-all.o $(PIC_OBJ)
	objcopy --wildcard --keep-global-symbol='s2s_*' $(LIB_DIR)/libs2s-all.o
	@rm -f $@
	ar rcs $@ $(LIB_DIR)/libs2s-all.o

# s2s.pc with @PREFIX@ and @LIBDIR@ left for scripts/install.sh to fill in.
$(LIB_DIR)/s2s.pc.in: src/api/s2s.pc.in include/s2s.h
	@mkdir -p $(LIB_DIR)
	sed 's/@VERSION@/$(LIB_VERSION)/; s/@REQUIRES@/$(LIB_PKGS)/' $< > $@

$(BUILD)/double/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DS2S_REAL_DOUBLE -Itests -c -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -c -o $@ $<

# The web page of s2s serve is built into the binary (.incbin in page.c).
$(BUILD)/src/serve/page.o: src/serve/page.html

# The FLOP count of the benchmark (bench/flops.c) has a unit test.
BENCH_FLOPS_OBJ := $(BUILD)/bench/flops.o

$(TEST_BIN): $(TEST_OBJ) $(BENCH_FLOPS_OBJ) $(BUILD)/libs2s.a
	$(CC) -o $@ $^ -lcriterion $(LDLIBS_ALL)

$(BUILD)/fuzz-replay/%: $(BUILD)/fuzz/%.o $(BUILD)/fuzz/replay.o $(BUILD)/libs2s.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDLIBS_ALL)
.SECONDARY: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%.o) $(BUILD)/fuzz/replay.o

$(GC_BIN): $(GC_OBJ) $(BASE_OBJ)
	$(CC) -o $@ $^ -lcriterion $(LDLIBS_ALL)

# Tests run from the repository root; end-to-end tests run the binary named by S2S.
# scripts/check-layers.sh fails when a file includes a header of a later layer, and
# fuzz-syntax when a fuzz target no longer compiles against the headers (make fuzz needs
# clang and is not part of the tests; this checks every fuzz/*.c with $(CC) alone).
# The library tests (tests/cli/test_library.c) run `make install` into a staging tree with
# this build's BUILD, BIN, OPT and SAN; lib and man are made first, so that it only copies.
test: $(BIN) $(TEST_BIN) $(GC_BIN) $(REPLAY_BIN) lib man fuzz-syntax
	scripts/check-layers.sh
	$(GC_BIN) -j2
	S2S=./$(BIN) PYTHON=$(PYTHON) S2S_BUILD=$(BUILD) S2S_OPT="$(OPT)" S2S_SAN="$(SAN)" $(TEST_BIN) -j2

# The MPI tests: a Criterion binary of their own (tests/mpi/, with the shared helpers)
# that starts `mpirun -np N --oversubscribe ./s2s train ...`; the s2s under test is the
# MPI build. Open MPI refuses to run as root unless told it may.
MPI_TEST_SRC := $(sort $(wildcard tests/mpi/*.c)) tests/helpers.c
MPI_TEST_BIN := $(BUILD)/s2s-mpi-tests

$(MPI_TEST_BIN): $(MPI_TEST_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libs2s.a
	$(CC) -o $@ $^ -lcriterion $(LDLIBS_ALL)

# The gradient allreduce timed alone (bench/mpi/allreduce.c; docs/distributed.md):
#   make MPI=1 build/mpi/s2s-allreduce && mpirun -np 2 build/mpi/s2s-allreduce PARAMS
$(BUILD)/s2s-allreduce: $(BUILD)/bench/mpi/allreduce.o $(BUILD)/libs2s.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)

MPI_ROOT_OK := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
test-mpi:
	$(MAKE) --no-print-directory MPI=1 BIN=build/mpi/s2s build/mpi/s2s build/mpi/s2s-mpi-tests
	$(MPI_ROOT_OK) S2S=./build/mpi/s2s build/mpi/s2s-mpi-tests -j1

# The MPI tests with an MPI build under ASan and UBSan (build/mpi-asan/). Leak checks
# are off: Open MPI keeps allocations until exit in plugins it has unloaded by then,
# which LeakSanitizer can neither name nor suppress (`make asan` checks s2s's own).
asan-mpi:
	$(MAKE) --no-print-directory MPI=1 BUILD=build/mpi-asan BIN=build/mpi-asan/s2s OPT="-O1 -g" \
	  SAN="$(ASAN_FLAGS)" build/mpi-asan/s2s build/mpi-asan/s2s-mpi-tests
	$(MPI_ROOT_OK) ASAN_OPTIONS=detect_leaks=0 S2S=./build/mpi-asan/s2s build/mpi-asan/s2s-mpi-tests -j1

ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
asan:
	$(MAKE) --no-print-directory BUILD=build/asan BIN=build/asan/s2s OPT="-O1 -g" SAN="$(ASAN_FLAGS)" test

# The manual pages s2s.1 and s2s-COMMAND.1, and the bash completion, are generated from
# the option tables that --help prints, read from the binary (`s2s --dump-options`,
# `s2s COMMAND --dump-options`): they change with the binary and never differ from its
# help (docs/development.md). s2s.1 is written last and stands for the set.
MAN_DIR    := $(BUILD)/man
COMPLETION := $(BUILD)/completion/s2s
PREFIX     ?= /usr/local
DESTDIR    ?=

man: $(MAN_DIR)/s2s.1 $(COMPLETION)

$(MAN_DIR)/s2s.1: $(BIN) scripts/gen-man.sh scripts/option-tables.sh scripts/man.awk
	scripts/gen-man.sh $(abspath $(BIN)) $(MAN_DIR)

$(COMPLETION): $(BIN) scripts/gen-completion.sh scripts/option-tables.sh scripts/completion.awk
	scripts/gen-completion.sh $(abspath $(BIN)) $@

# The library goes to LIBDIR, the Python module (python/s2s/) to PYTHONDIR: Debian's
# python3 reads /usr/lib/python3/dist-packages, and /usr/local/lib/python3.X/dist-packages
# for the Python it runs.
LIBDIR    ?= $(PREFIX)/lib
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/$(shell \
               $(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])')/dist-packages)

install: $(BIN) man lib
	scripts/install.sh install --prefix "$(PREFIX)" --destdir "$(DESTDIR)" --bin $(BIN) --man $(MAN_DIR) \
	  --completion $(COMPLETION) --lib $(LIB_DIR) --header include/s2s.h --libdir "$(LIBDIR)" \
	  --python python/s2s --pythondir "$(PYTHONDIR)"

uninstall:
	scripts/install.sh uninstall --prefix "$(PREFIX)" --destdir "$(DESTDIR)"

# The Debian packages, built by debian/rules (make install into debian/tmp) in a copy of
# the source tree under DEB_DIR, where they land; tests/cli/test_deb.c installs them into
# a scratch root. make clean removes them with build/.
DEB_DIR := build/deb
deb:
	scripts/build-deb.sh $(DEB_DIR)

# The benchmark driver (bench/bench.c, bench/flops.c) links with the library; run.sh
# builds nothing itself and writes bench/results.md.
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
BENCH_BIN := $(BUILD)/s2s-bench

$(BENCH_BIN): $(BENCH_OBJ) $(BUILD)/libs2s.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)

bench: $(BIN) $(BENCH_BIN)
	BENCH=$(BENCH_BIN) S2S=./$(BIN) PYTHON=$(PYTHON) bench/run.sh
	S2S=./$(BIN) bench/serve.sh
	S2S=./$(BIN) bench/ct2.sh
	S2S=./$(BIN) bench/busy.sh

# Fuzzing. `make fuzz` compiles the library with clang, libFuzzer's coverage
# instrumentation, ASan and UBSan into build/fuzz/ (apart from the gcc builds) and
# links each target fuzz/NAME.c into build/fuzz/fuzz-NAME. Run one by hand on a
# scratch copy of its seeds (the fuzzer adds to the first directory it is given):
#   mkdir -p /tmp/c && build/fuzz/fuzz-vocab -max_len=4096 -max_total_time=600 /tmp/c fuzz/seeds/vocab
# `make fuzz-run FUZZ_SECONDS=600` runs every target in turn (scripts/fuzz.sh) and
# prints executions, exec/s, coverage and findings per target; FUZZ_TARGETS picks some.
# `make fuzz-seeds` regenerates the model files of fuzz/seeds/model_file/.
FUZZ_CC      ?= /usr/bin/clang
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
                -fno-sanitize-recover=undefined
FUZZ_OBJ     := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%.o)

fuzz:
	$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) OPT="-O1 -g" SAN="$(FUZZ_SAN)" \
	  NUM_CFLAGS= fuzz-targets

fuzz-targets: $(FUZZ_TARGETS:%=$(BUILD)/fuzz-%)
.SECONDARY: $(FUZZ_OBJ) $(BUILD)/fuzz/make_seeds.o

$(BUILD)/fuzz-%: $(BUILD)/fuzz/%.o $(BUILD)/libs2s.a
	$(CC) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_ALL)

fuzz-syntax:
	@for f in fuzz/*.c; do \
	  $(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Werror -Iinclude -Isrc -Itests \
	    $(PKG_CFLAGS) -fsyntax-only $$f || { echo "fuzz-syntax: $$f does not compile"; exit 1; }; \
	done

fuzz-run: fuzz
	scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-seeds: $(BUILD)/fuzz-make-seeds
	$(BUILD)/fuzz-make-seeds fuzz/seeds/model_file

$(BUILD)/fuzz-make-seeds: $(BUILD)/fuzz/make_seeds.o $(BUILD)/libs2s.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)

clean:
	rm -rf build $(BIN)

-include $(LIB_OBJ:.o=.d) $(PIC_OBJ:.o=.d) $(MPI_TEST_SRC:%.c=$(BUILD)/%.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) $(GC_OBJ:.o=.d) $(BUILD)/src/main.d $(FUZZ_OBJ:.o=.d) $(BUILD)/fuzz/replay.d
