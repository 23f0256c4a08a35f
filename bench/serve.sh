#!/bin/sh
# The load test of `s2s serve` (docs/cli/serve.md), on the loopback address:
#   bench/serve.sh [MODEL [SECONDS]]
# MODEL: a model trained on fra.txt with the default recipe. Without it, $SERVE_MODEL,
# else bench/out/serve/model.s2s, trained the first time with the default recipe for
# 10 minutes (`make bench` runs it so; the speed is the architecture's, and the
# outputs are of sensible length; a 60-minute model gives the figures of the issue).
# For 1, 8 and 64 concurrent clients, each sending one sentence a request and the next
# as soon as the answer is in (wrk, Debian's package, keep-alive connections), it reports
# requests/s and the 50th and 99th percentile latency, with the server at its default
# decoding (beam 5, int8) and at greedy int8 (--beam 1); one client sending a short
# sentence; and, as the ceiling, `s2s translate -i` on the same sentences in one process
# (sentences/s, the best of three, its start left out). Sentences: 640 English sides of ../shared/data/fra.txt
# (every 250th line). Prints a Markdown table and writes it to bench/out/serve.md.
set -eu
cd "$(dirname "$0")/.."
s2s=${S2S:-./s2s}
model=${1:-${SERVE_MODEL:-bench/out/serve/model.s2s}}
secs=${2:-10}
if [ ! -f "$model" ]; then
    [ "$model" = bench/out/serve/model.s2s ] || { echo "bench/serve.sh: $model is missing" >&2; exit 2; }
    mkdir -p bench/out/serve
    echo "bench/serve.sh: training $model (the default recipe, 10 minutes)" >&2
    "$s2s" train ../shared/data/fra.txt -o "$model" --time 10 > bench/out/serve/train.log 2>&1
fi
command -v wrk >/dev/null || { echo "bench/serve.sh: wrk is missing (apt-get install wrk)" >&2; exit 2; }
corpus=../shared/data/fra.txt
[ -f "$corpus" ] || { echo "bench/serve.sh: $corpus is missing (scripts/get-data.sh)" >&2; exit 2; }
out=bench/out/serve
mkdir -p "$out"
awk -F '\t' 'NR % 250 == 0 { print $1 }' "$corpus" | head -640 > "$out/sentences.txt"
echo "I have a cat." > "$out/short.txt"
export SERVE_SENTENCES

# sentences/s of `s2s translate -i` (best of three), with its options ($1...), its
# start (model load and quantization, timed on an empty input) left out
seconds_of() {
    t0=$(date +%s.%N)
    "$s2s" translate "$model" -i "$@" > /dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v z="$t1" 'BEGIN { print z - a }'
}
translate_rate() {
    : > "$out/empty.txt"
    best=0
    for _ in 1 2 3; do
        start=$(seconds_of "$out/empty.txt" "$@")
        all=$(seconds_of "$out/sentences.txt" "$@")
        best=$(awk -v b="$best" -v s="$start" -v t="$all" -v n=640 'BEGIN { r = n / (t - s); printf "%.1f\n", (r > b ? r : b) }')
    done
    echo "$best"
}

# one wrk run: "requests/s p50_ms p99_ms non2xx"
load() { # clients sentences-file port
    threads=$(( $1 < 2 ? 1 : 2 ))
    SERVE_SENTENCES=$2 wrk -t"$threads" -c"$1" -d"${secs}s" --latency -s bench/serve.lua "http://127.0.0.1:$3/" > "$out/wrk.txt"
    awk '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
        / 50%/ { p50 = ms($2) } / 99%/ { p99 = ms($2) }
        /Requests\/sec/ { rps = $2 } /Non-2xx/ { bad = $NF }
        END { printf "%.1f %.1f %.1f %d\n", rps, p50, p99, bad + 0 }' "$out/wrk.txt"
}

start_server() { # options...
    # every client of the bench connects from 127.0.0.1: lift the per-address share
    "$s2s" serve "$model" --port 0 --log "$out/serve.log" --max-conns-per-ip 1000 "$@" > "$out/listen.txt" &
    pid=$!
    for _ in $(seq 600); do
        port=$(sed -n 's/.*:\([0-9][0-9]*\)\/$/\1/p' "$out/listen.txt")
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    echo "bench/serve.sh: the server did not start" >&2
    exit 1
}

{
    echo "| decoding | clients | requests/s | p50 ms | p99 ms | not 200 |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
} > "$out/serve.md"
for beam in 5 1; do
    name="beam $beam, int8"
    [ "$beam" = 1 ] && name="greedy, int8"
    start_server --beam "$beam"
    load 1 "$out/sentences.txt" "$port" > /dev/null # warm up
    for c in 1 8 64; do
        set -- $(load "$c" "$out/sentences.txt" "$port")
        echo "| $name | $c | $1 | $2 | $3 | $4 |" >> "$out/serve.md"
    done
    set -- $(load 1 "$out/short.txt" "$port")
    echo "| $name, \"I have a cat.\" | 1 | $1 | $2 | $3 | $4 |" >> "$out/serve.md"
    kill -TERM "$pid"
    wait "$pid"
    rate=$(translate_rate --beam "$beam")
    echo "| $name: \`s2s translate -i\`, one process | | $rate sentences/s | | | |" >> "$out/serve.md"
done
cat "$out/serve.md"
