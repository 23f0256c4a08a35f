#!/usr/bin/env bash
# Profiles the benchmark's jobs with perf (after `make bench`, which leaves the batches,
# sentences and model files in bench/out/): where s2s spends its time in training on the
# reference configuration and in greedy decoding at batch 1, by function, every thread
# of the process. Only the timed part is sampled (the driver enables perf through its
# control FIFO after loading and warm-up), with DWARF call graphs, so the report gives
# self time per function and inclusive time per model phase. Not part of `make bench`;
# needs `perf`.
#
#   bench/profile.sh [train|train-transformer|train-bf16|train-transformer-bf16|greedy1|greedy64 ...]
#                    (default: train greedy1; -bf16: s2s train --precision bf16's products)
#
# Writes bench/out/perf-JOB.data and bench/out/perf-JOB.txt and prints the top of each.
# BENCH_THREADS (2) as for run.sh; PERF_FREQ (999) samples per second per thread;
# BENCH_OUT (bench/out) and BENCH_SET (BENCH_OUT/set) name the files of run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/release/s2s-bench}
THREADS=${BENCH_THREADS:-2}
FREQ=${PERF_FREQ:-999}
OUT=${BENCH_OUT:-bench/out}
SET=${BENCH_SET:-$OUT/set}
export OPENBLAS_NUM_THREADS=$THREADS OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4}
command -v perf >/dev/null || { echo "profile: perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }
[[ -f $SET/batches.safetensors && -f $OUT/train-gru.s2s ]] || { echo "profile: run 'make bench' first" >&2; exit 1; }

jobs=("$@")
[[ ${#jobs[@]} -gt 0 ]] || jobs=(train greedy1)
for job in "${jobs[@]}"; do
  case $job in
    train) cmd=("$BENCH" train "$SET/batches.safetensors" --init "$OUT/train-gru.s2s" --threads "$THREADS" --warmup 2 --runs 2) ;;
    train-transformer) cmd=("$BENCH" train "$SET/batches.safetensors" --init "$OUT/train-transformer.s2s" --threads "$THREADS" --warmup 2 --runs 2) ;;
    train-bf16) cmd=("$BENCH" train "$SET/batches.safetensors" --init "$OUT/train-gru.s2s" --threads "$THREADS" --warmup 2 --runs 2 --precision bf16) ;;
    train-transformer-bf16) cmd=("$BENCH" train "$SET/batches.safetensors" --init "$OUT/train-transformer.s2s" --threads "$THREADS" --warmup 2 --runs 2 --precision bf16) ;;
    greedy1) cmd=("$BENCH" greedy "$OUT/train-gru.s2s" "$SET/dec.safetensors" --batch 1 --first 100 --threads "$THREADS" --runs 3) ;;
    greedy64) cmd=("$BENCH" greedy "$OUT/train-gru.s2s" "$SET/dec.safetensors" --batch 64 --threads "$THREADS" --runs 3) ;;
    *) echo "profile: unknown job '$job' (train, train-transformer, train-bf16, train-transformer-bf16, greedy1, greedy64)" >&2; exit 2 ;;
  esac
  echo "profile: $job: ${cmd[*]}" >&2
  ctl=$OUT/perf-ctl.fifo
  rm -f "$ctl"
  mkfifo "$ctl"
  BENCH_PERF_CTL=$ctl perf record -q -F "$FREQ" --call-graph dwarf,16384 -D -1 --control "fifo:$ctl" \
    -o "$OUT/perf-$job.data" -- "${cmd[@]}" >/dev/null
  rm -f "$ctl"
  # head closes the pipes early: under pipefail perf's SIGPIPE must not end the script
  {
    echo "== $job: self time by function (all threads)"
    perf report -i "$OUT/perf-$job.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null \
      | grep -v '^#' | grep -v '^$' | head -n 30
    echo "== $job: inclusive time by function"
    perf report -i "$OUT/perf-$job.data" --children --sort symbol --stdio -g none 2>/dev/null \
      | grep -v '^#' | grep -v '^$' | head -n 60
  } >"$OUT/perf-$job.txt" || true
  cat "$OUT/perf-$job.txt"
done
