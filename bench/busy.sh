#!/bin/bash
# Training beside a busy process (bench/README.md, "A busy machine"):
#   bench/busy.sh [STEPS]
# `s2s train` on ../shared/data/fra.txt (prepared once into bench/out/busy/data) for
# STEPS steps (default 300), the recurrent reference (--arch rnn) and the Transformer (the
# recipe's), at --threads 1 and 2, alone and beside one busy process (a shell loop that
# keeps one core busy, started in its own session), and with the default --threads (what
# base/cores.c picks there). Each cell is the median over $BENCH_BUSY_RUNS (3) runs of the
# run's target tokens per second after its first 50 steps (from MODEL.log.jsonl). $S2S_OLD,
# when set, is another s2s binary measured the same way in the same run (an A/B);
# $BENCH_BUSY_ARCHS (default "rnn transformer") picks the models.
# Prints a Markdown table and writes it to bench/out/busy/results.md.
set -eu
cd "$(dirname "$0")/.."
s2s=${S2S:-./s2s}
steps=${1:-150}
runs=${BENCH_BUSY_RUNS:-3}
out=bench/out/busy
corpus=${BENCH_CORPUS:-../shared/data/fra.txt}
[ -f "$corpus" ] || { echo "bench/busy.sh: $corpus is missing (scripts/get-data.sh)" >&2; exit 2; }
mkdir -p "$out"
[ -f "$out/data/prepare.json" ] || "$s2s" prepare "$corpus" -o "$out/data" --bpe 16000 --joint > /dev/null 2>&1

busy_pid=
start_busy() { setsid sh -c 'while :; do :; done' & busy_pid=$!; }
stop_busy() { [ -z "$busy_pid" ] || kill "$busy_pid" 2> /dev/null || true; busy_pid=; }
trap stop_busy EXIT

# tokens/s after the first 50 steps of one run: BIN ARCH THREADS (0: the default)
tok_s() {
    local bin=$1 arch=$2 th=$3 m=$out/m.s2s
    rm -rf "$m" "$m".*
    local t=()
    [ "$th" = 0 ] || t=(--threads "$th")
    "$bin" train "$out/data" -o "$m" --arch "$arch" --steps "$steps" --valid-every 0 --quiet "${t[@]}" > /dev/null 2>&1
    python3 - "$m.log.jsonl" << 'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"step"' in l]
rows = [r for r in rows if r.get("event") == "step"]
a, b = rows[49], rows[-1]
print("%.0f" % (sum(r["tokens"] for r in rows[50:]) / (b["elapsed"] - a["elapsed"])))
EOF
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
cell() { for _ in $(seq "$runs"); do tok_s "$@"; done | median; }

bins=("$s2s")
[ -z "${S2S_OLD:-}" ] || bins+=("$S2S_OLD")
{
    echo "Training beside a busy process: target tokens/s (median of $runs runs of $steps steps), $(nproc) cores"
    echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo
    echo "| binary | model | alone, 1 thread | alone, 2 threads | busy, 1 thread | busy, 2 threads | busy, default threads |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
} > "$out/results.md"
for bin in "${bins[@]}"; do
    for arch in ${BENCH_BUSY_ARCHS:-rnn transformer}; do
        a1=$(cell "$bin" "$arch" 1)
        a2=$(cell "$bin" "$arch" 2)
        start_busy
        b1=$(cell "$bin" "$arch" 1)
        b2=$(cell "$bin" "$arch" 2)
        bd=$(cell "$bin" "$arch" 0)
        stop_busy
        echo "| $bin | $arch | $a1 | $a2 | $b1 | $b2 | $bd |" >> "$out/results.md"
    done
done
cat "$out/results.md"
