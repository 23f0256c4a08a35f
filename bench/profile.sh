#!/usr/bin/env bash
# Profiles the benchmark's jobs with perf (after `make bench`, which leaves the batches,
# sentences and model files in bench/out/): where s2s spends its time in training on the
# reference configuration and in greedy decoding at batch 1, by function (self time,
# every thread of the process). Not part of `make bench`; needs `perf`.
#
#   bench/profile.sh [train|greedy1|greedy64 ...]     (default: train greedy1)
#
# Writes bench/out/perf-JOB.data and bench/out/perf-JOB.txt and prints the top of each.
# BENCH_THREADS (2) as for run.sh; PERF_FREQ (999) samples per second per thread.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/release/s2s-bench}
THREADS=${BENCH_THREADS:-2}
FREQ=${PERF_FREQ:-999}
OUT=bench/out
SET=$OUT/set
export OPENBLAS_NUM_THREADS=$THREADS
command -v perf >/dev/null || { echo "profile: perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }
[[ -f $SET/batches.safetensors && -f $OUT/train-gru.s2s ]] || { echo "profile: run 'make bench' first" >&2; exit 1; }

jobs=("$@")
[[ ${#jobs[@]} -gt 0 ]] || jobs=(train greedy1)
for job in "${jobs[@]}"; do
  case $job in
    train) cmd=("$BENCH" train "$SET/batches.safetensors" --init "$OUT/train-gru.s2s" --threads "$THREADS" --warmup 2 --runs 2) ;;
    greedy1) cmd=("$BENCH" greedy "$OUT/train-gru.s2s" "$SET/dec.safetensors" --batch 1 --first 100 --threads "$THREADS" --runs 3) ;;
    greedy64) cmd=("$BENCH" greedy "$OUT/train-gru.s2s" "$SET/dec.safetensors" --batch 64 --threads "$THREADS" --runs 3) ;;
    *) echo "profile: unknown job '$job' (train, greedy1, greedy64)" >&2; exit 2 ;;
  esac
  echo "profile: $job: ${cmd[*]}" >&2
  perf record -q -F "$FREQ" -o "$OUT/perf-$job.data" -- "${cmd[@]}" >/dev/null
  perf report -i "$OUT/perf-$job.data" --no-children --sort dso,symbol --stdio 2>/dev/null \
    | grep -v '^#' | grep -v '^$' >"$OUT/perf-$job.txt"
  echo "== $job: top functions by self time (all threads)"
  head -n 25 "$OUT/perf-$job.txt"
done
