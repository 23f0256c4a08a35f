#!/bin/sh
# Runs fuzz targets built by `make fuzz`, each for SECONDS, one after the other:
#   scripts/fuzz.sh SECONDS [TARGET...]      (default: every target)
# Each target starts from a scratch copy of its seeds (build/fuzz/run/TARGET/corpus;
# the committed fuzz/seeds/TARGET is never written) and leaves its log
# (build/fuzz/run/TARGET/log) and any crash, leak or timeout input
# (build/fuzz/run/TARGET/crash-*, leak-*, timeout-*, oom-*) there. Prints one line a
# target: executions, executions per second, coverage and whether it found anything;
# exits 1 when any target did. A target stopped by SIGINT before its time (libFuzzer
# exits 72) is reported as interrupted, not as a finding.
# With FUZZ_CORPUS=DIR, each target's corpus is DIR/TARGET instead: made from the seeds
# the first time and kept (and grown) from one run to the next, so that runs of a target
# add up; the seeds are read beside it every time. Each line also gives the processor
# seconds the run used (user + system), which is what adds up on a shared machine, where
# wall seconds do not.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/fuzz.sh SECONDS [TARGET...]" >&2; exit 2; }
secs=$1
shift
[ $# -ge 1 ] || set -- corpus gz_corpus tokenize vocab json model_file bpe ids serve_request constraints serve_form parallel state
status=0
for t in "$@"; do
    bin=build/fuzz/fuzz-$t
    [ -x "$bin" ] || { echo "fuzz: $bin is missing (run make fuzz)" >&2; exit 2; }
    [ -d "fuzz/seeds/$t" ] || { echo "fuzz: no seeds in fuzz/seeds/$t" >&2; exit 2; }
    case $t in
        model_file | state) max_len=65536 ;;
        *) max_len=4096 ;;
    esac
    dict=
    [ -f "fuzz/dicts/$t.dict" ] && dict=-dict=fuzz/dicts/$t.dict
    run=build/fuzz/run/$t
    rm -rf "$run"
    mkdir -p "$run"
    if [ -n "${FUZZ_CORPUS:-}" ]; then
        corpus=$FUZZ_CORPUS/$t
        mkdir -p "$corpus"
        seeds=fuzz/seeds/$t
    else
        corpus=$run/corpus
        mkdir -p "$corpus"
        cp "fuzz/seeds/$t"/* "$corpus/"
        seeds=
    fi
    rc=0
    start=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
    "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -max_len="$max_len" -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$run/" $dict "$corpus" $seeds >"$run/log" 2>&1 || rc=$?
    ticks=$(( $(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat) - start ))
    cpu=$(( ticks / $(getconf CLK_TCK) ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log" | tail -n 1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$run/log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$run/log" | tail -n 1)
    found=$(find "$run" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
        -o -name 'oom-*' -o -name 'slow-unit-*' \) | sort | tr '\n' ' ')
    if [ "$rc" -eq 72 ] && [ -z "$found" ]; then
        verdict="interrupted (exit 72), nothing found"   # libFuzzer's exit on SIGINT
    elif [ "$rc" -ne 0 ] || [ -n "$found" ]; then
        status=1
        verdict="FOUND (exit $rc): ${found:-see $run/log}"
    else
        verdict="nothing found"
    fi
    printf '%-13s %ss (cpu %ss)  execs %s  exec/s %s  %s  %s\n' "$t" "$secs" "$cpu" "${execs:-?}" \
        "${speed:-?}" "${cov:-cov: ?}" "$verdict"
done
exit $status
