#!/usr/bin/env bash
# make bench: s2s against the same model in PyTorch (scripts/torch_ref.py), on the same
# machine, in the same run, with the same threads, batches and sentences; and s2s's
# training FLOP rate against OpenBLAS sgemm measured in the same run. Prints the table
# and writes bench/results.md. See bench/README.md for what each row measures.
#
# Environment (defaults in brackets):
#   BENCH           the C driver [build/release/s2s-bench]      S2S     [./s2s]
#   PYTHON          a Python with torch [/usr/bin/python3]
#   BENCH_THREADS   BLAS / torch threads for everything [2]
#   BENCH_CORPUS    [../shared/data/fra.txt], prepared once into bench/out/fra with
#                   `s2s prepare` defaults (min-freq 2); BENCH_DATA: an existing
#                   prepared directory to use instead
#   BENCH_BATCHES   training batches per run [12]   BENCH_RUNS   runs per median [3]
#   BENCH_LONGEST   the longest batches of an epoch, for training's peak memory [4]
#   BENCH_SENT1     sentences at batch 1 and beam 5 [100]   BENCH_SENT64  at batch 64 [640]
#   BENCH_MAXLEN    output tokens per sentence [10]
#   BENCH_PROC_RUNS runs of the whole-process rows [5]   BENCH_SGEMM_REPS  [7]
#   BENCH_ROWS      which parts to run [train,decode] (e.g. "decode" to skip training;
#                   "growth" for how cost grows with length, vocabulary and batch)
#   BENCH_GROWTH_LENS     source = target lengths of the growth rows [5,10,20,40,80]
#   BENCH_GROWTH_VOCABS   target vocabularies of the growth rows [4096,8192,16384,32768]
#   BENCH_GROWTH_BATCHES  decoding batch sizes of the growth rows [1,8,64,256]
#   BENCH_GROWTH_BATCH    rows of a synthetic training batch [64]
#   BENCH_GROWTH_TOKENS   target tokens per timed run, at least one batch [1280]
#   BENCH_GROWTH_SENT     synthetic sentences per greedy length [10]
#   BENCH_GROWTH_DEC      sentences of the decoding set per batch-size row [256]
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/release/s2s-bench}
S2S=${S2S:-./s2s}
PYTHON=${PYTHON:-/usr/bin/python3}
THREADS=${BENCH_THREADS:-2}
CORPUS=${BENCH_CORPUS:-../shared/data/fra.txt}
NB=${BENCH_BATCHES:-12}
NLONG=${BENCH_LONGEST:-4}
RUNS=${BENCH_RUNS:-3}
WARMUP=2
SENT1=${BENCH_SENT1:-100}
SENT64=${BENCH_SENT64:-640}
MAXLEN=${BENCH_MAXLEN:-10}
PROC_RUNS=${BENCH_PROC_RUNS:-5}
SGEMM_REPS=${BENCH_SGEMM_REPS:-7}
ROWS=${BENCH_ROWS:-train,decode}
# torch links the same OpenBLAS (Debian's libblas.so.3 alternative): its BLAS threads
# follow this variable, its own threads torch.set_num_threads
export OPENBLAS_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
OUT=bench/out
RES=$OUT/results.jsonl
CMDS=$OUT/commands.txt

say() { printf 'bench: %s\n' "$*" >&2; }
# cmdline ARGS...: the command as one shell line (arguments quoted only when needed)
cmdline() {
  local a sep=""
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then printf '%s%s' "$sep" "$a"
    else printf "%s'%s'" "$sep" "${a//\'/\'\\\'\'}"; fi
    sep=" "
  done
  printf '\n'
}
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

[[ -x $BENCH ]] || die "$BENCH not built (run 'make bench')"
[[ -x $S2S ]] || die "$S2S not built (run 'make')"
mkdir -p "$OUT"
: >"$RES"
: >"$CMDS"

# record ROW IMPL COMMAND...: runs COMMAND (its stdout's last line is one JSON object)
# and appends it to results.jsonl with the row and implementation added. A failing
# command is recorded as not available, with the last line of its error output.
record() {
  local row=$1 impl=$2 line err rc=0
  shift 2
  cmdline "$@" >>"$CMDS"
  err=$(mktemp)
  line=$("$@" 2>"$err" | tail -n 1) || rc=$?
  if [[ $rc -ne 0 || $line != \{* ]]; then
    local why
    why=$(grep -v '^\s*$' "$err" | tail -n 1 | tr -d '"\\' | cut -c1-200)
    say "$row ($impl): not available: ${why:-exit $rc}"
    printf '{"row": "%s", "impl": "%s", "na": "%s"}\n' "$row" "$impl" "${why:-exit status $rc}" >>"$RES"
  else
    printf '{"row": "%s", "impl": "%s", %s\n' "$row" "$impl" "${line#\{}" >>"$RES"
  fi
  rm -f "$err"
}
# na ROW IMPL REASON: a row that cannot be measured.
na() { printf '{"row": "%s", "impl": "%s", "na": "%s"}\n' "$1" "$2" "$3" >>"$RES"; say "$1 ($2): n/a: $3"; }

T0=$(date +%s)
have_torch=1
"$PYTHON" -c 'import torch' 2>/dev/null || have_torch=0
[[ $have_torch == 1 ]] || say "no torch in $PYTHON: PyTorch rows are n/a"

# ---------------------------------------------------------------- data
if [[ -n ${BENCH_DATA:-} ]]; then
  DATA=$BENCH_DATA
else
  DATA=$OUT/fra
  if [[ ! -f $DATA/prepare.json ]]; then
    [[ -f $CORPUS ]] || die "$CORPUS missing (set BENCH_CORPUS or BENCH_DATA)"
    say "preparing $CORPUS into $DATA"
    "$S2S" prepare "$CORPUS" -o "$DATA" >&2
  fi
fi
SET=$OUT/set
say "batches and sentences from $DATA"
record data s2s "$BENCH" data "$DATA" -o "$SET" --batches "$NB" --sentences "$SENT64" --seed 1 --batch 64 \
  --longest "$NLONG"
KEEP_CASE=$("$PYTHON" -c 'import json,sys; print(str(json.load(open(sys.argv[1]))["options"]["keep_case"]).lower())' "$DATA/prepare.json")
DIRECTION=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["options"]["direction"])' "$DATA/prepare.json")

# ---------------------------------------------------------------- sgemm
say "sgemm peak ($THREADS threads)"
record sgemm openblas "$BENCH" sgemm --threads "$THREADS" --reps "$SGEMM_REPS"

# init NAME CONFIG_JSON: a model file of that configuration written by torch_ref.py
# init (both sides load it: same weights); fails when torch_ref.py lacks the variant.
init() {
  local name=$1 cfg=$2
  [[ $have_torch == 1 ]] || return 1
  cmdline "$PYTHON" scripts/torch_ref.py init --config "$cfg" --src-vocab-file "$DATA/vocab.src" \
    --tgt-vocab-file "$DATA/vocab.tgt" --seed 1 -o "$OUT/$name.s2s" >>"$CMDS"
  "$PYTHON" scripts/torch_ref.py init --config "$cfg" --src-vocab-file "$DATA/vocab.src" \
    --tgt-vocab-file "$DATA/vocab.tgt" --seed 1 -o "$OUT/$name.s2s" 2>"$OUT/$name.init.err"
}

BASE="\"keep_case\": $KEEP_CASE, \"direction\": \"$DIRECTION\""
# row name | torch_ref config | bench train model options
CONFIGS=(
  "train-gru|{$BASE}|"
  "train-lstm|{$BASE, \"cell\": \"lstm\"}|--cell lstm"
  "train-luong|{$BASE, \"attention\": \"luong-general\", \"input_feed\": true}|--attention luong-general --input-feed"
  "train-transformer|{$BASE, \"arch\": \"transformer\"}|--arch transformer"
)

# ---------------------------------------------------------------- training
if [[ ,$ROWS, == *,train,* ]]; then
  # Each side as its users run it: `s2s train` makes OpenBLAS's idle threads sleep after
  # 2^4 cycles instead of spinning for 2^28 (src/main.c), so the s2s side gets that;
  # PyTorch runs with the library's default (bench/README.md gives both).
  S2S_TRAIN_ENV=(env "OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4}")
  have_bf16=0
  if grep -qw avx512_bf16 /proc/cpuinfo || grep -qw amx_bf16 /proc/cpuinfo; then have_bf16=1; fi
  for c in "${CONFIGS[@]}"; do
    IFS='|' read -r row cfg opts <<<"$c"
    say "$row: $NB batches x $RUNS runs after $WARMUP warm-up steps"
    if init "$row" "$cfg"; then
      record "$row" s2s "${S2S_TRAIN_ENV[@]}" "$BENCH" train "$SET/batches.safetensors" --init "$OUT/$row.s2s" \
        --threads "$THREADS" --warmup "$WARMUP" --runs "$RUNS"
      record "$row" torch "$PYTHON" bench/torch_bench.py train "$SET/batches.safetensors" "$OUT/$row.s2s" \
        --threads "$THREADS" --warmup "$WARMUP" --runs "$RUNS"
      # PyTorch at its best: on this kind of machine Debian's torch trains faster on one
      # thread than on two (its BLAS threads follow OPENBLAS_NUM_THREADS), and with bf16
      # autocast where the CPU has bf16 instructions; s2s on one thread, for the scaling
      if [[ $THREADS -gt 1 && ($row == train-gru || $row == train-transformer) ]]; then
        say "$row: PyTorch and s2s on 1 thread, PyTorch with bf16 autocast"
        record "$row" torch1 env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$PYTHON" bench/torch_bench.py train \
          "$SET/batches.safetensors" "$OUT/$row.s2s" --threads 1 --warmup "$WARMUP" --runs "$RUNS"
        record "$row" s2s1 "${S2S_TRAIN_ENV[@]}" OPENBLAS_NUM_THREADS=1 "$BENCH" train "$SET/batches.safetensors" \
          --init "$OUT/$row.s2s" --threads 1 --warmup "$WARMUP" --runs "$RUNS"
        # the products on BLAS's own threads, as before s2s ran them on its pool
        record "$row" s2sown "${S2S_TRAIN_ENV[@]}" "$BENCH" train "$SET/batches.safetensors" \
          --init "$OUT/$row.s2s" --threads "$THREADS" --warmup "$WARMUP" --runs "$RUNS" --products own
        if [[ $have_bf16 == 1 ]]; then
          record "$row" torchbf16 env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$PYTHON" bench/torch_bench.py train \
            "$SET/batches.safetensors" "$OUT/$row.s2s" --threads 1 --warmup "$WARMUP" --runs "$RUNS" --bf16
          record "$row" torchbf16x2 "$PYTHON" bench/torch_bench.py train "$SET/batches.safetensors" "$OUT/$row.s2s" \
            --threads "$THREADS" --warmup "$WARMUP" --runs "$RUNS" --bf16
          # s2s train --precision bf16: the products' inputs in bf16, sums in fp32
          record "$row" s2sbf16 "${S2S_TRAIN_ENV[@]}" "$BENCH" train "$SET/batches.safetensors" \
            --init "$OUT/$row.s2s" --threads "$THREADS" --warmup "$WARMUP" --runs "$RUNS" --precision bf16
          record "$row" s2sbf16own "${S2S_TRAIN_ENV[@]}" "$BENCH" train "$SET/batches.safetensors" \
            --init "$OUT/$row.s2s" --threads "$THREADS" --warmup "$WARMUP" --runs "$RUNS" --precision bf16 \
            --products own
        fi
      fi
      # peak memory where an epoch sets it: one pass over its longest batches
      say "$row: peak memory over the $NLONG longest batches of the epoch"
      record "$row-longest" s2s "${S2S_TRAIN_ENV[@]}" "$BENCH" train "$SET/longest.safetensors" \
        --init "$OUT/$row.s2s" --threads "$THREADS" --warmup 0 --runs 1
      record "$row-longest" torch "$PYTHON" bench/torch_bench.py train "$SET/longest.safetensors" "$OUT/$row.s2s" \
        --threads "$THREADS" --warmup 0 --runs 1
      # and in bf16, what `s2s train` runs by default on such a CPU (its bf16 copies of the
      # weights and factors, and oneDNN's libraries, are in its peak)
      if [[ $have_bf16 == 1 ]]; then
        record "$row-longest" s2sbf16 "${S2S_TRAIN_ENV[@]}" "$BENCH" train "$SET/longest.safetensors" \
          --init "$OUT/$row.s2s" --threads "$THREADS" --warmup 0 --runs 1 --precision bf16
      fi
    else
      why=$(tail -n 1 "$OUT/$row.init.err" 2>/dev/null | tr -d '"\\' || true)
      # shellcheck disable=SC2086
      record "$row" s2s "${S2S_TRAIN_ENV[@]}" "$BENCH" train "$SET/batches.safetensors" $opts --seed 1 \
        --threads "$THREADS" --warmup "$WARMUP" --runs "$RUNS"
      if [[ $have_torch == 1 ]]; then
        na "$row" torch "torch_ref.py lacks the variant ($why)"
      else
        na "$row" torch "no torch"
      fi
    fi
  done
fi

# ---------------------------------------------------------------- decoding
# torch1 ROW ARGS...: the PyTorch side of ROW again on one thread (PyTorch at its best:
# Debian's torch is often faster on one thread than on two here); the report compares
# s2s with the faster of the two
torch1() {
  local row=$1
  shift
  [[ $THREADS -gt 1 ]] || return 0
  record "$row" torch1 env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$PYTHON" bench/torch_bench.py "$@" --threads 1 \
    --runs "$RUNS"
}
if [[ ,$ROWS, == *,decode,* ]]; then
  MODEL=$OUT/train-gru.s2s
  if [[ ! -f $MODEL ]] && ! init train-gru "{$BASE}"; then
    die "cannot write the reference model for decoding (needs torch_ref.py init)"
  fi
  BEAM1=()
  HAVE_BEAM=0
  if "$S2S" translate --help | grep -q -- '--beam'; then
    HAVE_BEAM=1
    BEAM1=(--beam 1) # translate's default may be a beam search: greedy rows ask for greedy
  fi
  # s2s decodes in int8 by default (translate, eval); --precision f32 is PyTorch's
  # computation, so the f32 rows also check that the outputs are the same
  say "greedy batch 1: $SENT1 sentences, $MAXLEN tokens each"
  record greedy-b1 s2s "$BENCH" greedy "$MODEL" "$SET/dec.safetensors" --batch 1 --first "$SENT1" \
    --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS" --precision f32
  record greedy-b1 torch "$PYTHON" bench/torch_bench.py greedy "$MODEL" "$SET/dec.safetensors" --batch 1 \
    --first "$SENT1" --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS"
  torch1 greedy-b1 greedy "$MODEL" "$SET/dec.safetensors" --batch 1 --first "$SENT1" --max-len "$MAXLEN"
  for P in bf16 int8; do
    say "greedy batch 1, --precision $P: $SENT1 sentences"
    record greedy-b1-$P s2s "$BENCH" greedy "$MODEL" "$SET/dec.safetensors" --batch 1 --first "$SENT1" \
      --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS" --precision "$P"
  done
  say "greedy batch 64: $SENT64 sentences"
  record greedy-b64 s2s "$BENCH" greedy "$MODEL" "$SET/dec.safetensors" --batch 64 \
    --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS" --precision f32
  record greedy-b64-int8 s2s "$BENCH" greedy "$MODEL" "$SET/dec.safetensors" --batch 64 \
    --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS" --precision int8
  record greedy-b64 torch "$PYTHON" bench/torch_bench.py greedy "$MODEL" "$SET/dec.safetensors" --batch 64 \
    --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS"
  torch1 greedy-b64 greedy "$MODEL" "$SET/dec.safetensors" --batch 64 --max-len "$MAXLEN"

  TMODEL=$OUT/train-transformer.s2s
  if [[ -f $TMODEL ]] || init train-transformer "{$BASE, \"arch\": \"transformer\"}"; then
    say "Transformer greedy batch 1: $SENT1 sentences (PyTorch: incremental, with a cache)"
    record tf-greedy-b1 s2s "$BENCH" greedy "$TMODEL" "$SET/dec.safetensors" --batch 1 --first "$SENT1" \
      --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS" --precision f32
    record tf-greedy-b1-int8 s2s "$BENCH" greedy "$TMODEL" "$SET/dec.safetensors" --batch 1 --first "$SENT1" \
      --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS" --precision int8
    record tf-greedy-b1 torch "$PYTHON" bench/torch_bench.py greedy "$TMODEL" "$SET/dec.safetensors" --batch 1 \
      --first "$SENT1" --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS"
    torch1 tf-greedy-b1 greedy "$TMODEL" "$SET/dec.safetensors" --batch 1 --first "$SENT1" --max-len "$MAXLEN"
  else
    na tf-greedy-b1 s2s "no Transformer model (needs torch_ref.py init)"
  fi

  say "one sentence, whole process (load included)"
  SENT=$(head -n 1 "$SET/dec.txt")
  IDS=$(head -n 1 "$SET/dec.ids")
  record process-1 s2s "$BENCH" spawn --runs "$PROC_RUNS" -- "$S2S" translate "$MODEL" "$SENT" --max-len "$MAXLEN" \
    --threads "$THREADS" "${BEAM1[@]}"
  record process-1 torch "$BENCH" spawn --runs "$PROC_RUNS" -- "$PYTHON" bench/torch_bench.py one "$MODEL" "$IDS" \
    --max-len "$MAXLEN" --threads "$THREADS"

  say "beam 5, batch 1: $SENT1 sentences"
  if [[ $HAVE_BEAM == 1 ]]; then
    head -n "$SENT1" "$SET/dec.txt" >"$SET/dec1.txt"
    : >"$SET/empty.txt"
    # translate as a whole process: the same command on no input measures what is not
    # decoding (start, model load), which is subtracted
    for P in int8 f32; do
      record beam5-b1-$P s2s "$BENCH" spawn --runs "$RUNS" -- "$S2S" translate "$MODEL" -i "$SET/dec1.txt" \
        --batch 1 --beam 5 --max-len "$MAXLEN" --threads "$THREADS" --precision $P
      record beam5-b1-$P-base s2s "$BENCH" spawn --runs "$RUNS" -- "$S2S" translate "$MODEL" -i "$SET/empty.txt" \
        --batch 1 --beam 5 --max-len "$MAXLEN" --threads "$THREADS" --precision $P
    done
  else
    na beam5-b1 s2s "$S2S translate has no --beam"
  fi
  record beam5-b1 torch "$PYTHON" bench/torch_bench.py beam "$MODEL" "$SET/dec.safetensors" --beam 5 \
    --first "$SENT1" --max-len "$MAXLEN" --threads "$THREADS" --runs "$RUNS"
  torch1 beam5-b1 beam "$MODEL" "$SET/dec.safetensors" --beam 5 --first "$SENT1" --max-len "$MAXLEN"
fi

# ---------------------------------------------------------------- how cost grows
# Synthetic batches (bench synth: every source and target of a batch L tokens, random
# word ids) and synthetic target vocabularies; one warm-up step, then RUNS runs of
# about BENCH_GROWTH_TOKENS target tokens each. Rows grow-*-X: X is the length, the
# vocabulary or the batch size (bench/README.md, "How cost grows").
GROWTH_S=0
if [[ ,$ROWS, == *,growth,* ]]; then
  GT0=$(date +%s)
  [[ $have_torch == 1 ]] || say "growth: no torch: PyTorch cells are n/a"
  G=$OUT/growth
  mkdir -p "$G"
  IFS=, read -r -a GLENS <<<"${BENCH_GROWTH_LENS:-5,10,20,40,80}"
  IFS=, read -r -a GVOCABS <<<"${BENCH_GROWTH_VOCABS:-4096,8192,16384,32768}"
  IFS=, read -r -a GBATCHES <<<"${BENCH_GROWTH_BATCHES:-1,8,64,256}"
  GB=${BENCH_GROWTH_BATCH:-64}
  GTOK=${BENCH_GROWTH_TOKENS:-1280}
  GSENT=${BENCH_GROWTH_SENT:-10}
  GDEC=${BENCH_GROWTH_DEC:-256}
  VS=$(grep -c '' "$DATA/vocab.src")
  VT=$(grep -c '' "$DATA/vocab.tgt")
  S2S_TRAIN_ENV=(env "OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4}")
  have_bf16=0
  if grep -qw avx512_bf16 /proc/cpuinfo || grep -qw amx_bf16 /proc/cpuinfo; then have_bf16=1; fi
  # gtrain ROW BATCHES MODEL: one warm-up step and RUNS runs on both sides
  gtrain() {
    record "$1" s2s "${S2S_TRAIN_ENV[@]}" "$BENCH" train "$2" --init "$3" --threads "$THREADS" --warmup 1 \
      --runs "$RUNS"
    if [[ $have_torch == 1 ]]; then
      record "$1" torch "$PYTHON" bench/torch_bench.py train "$2" "$3" --threads "$THREADS" --warmup 1 --runs "$RUNS"
    else
      na "$1" torch "no torch"
    fi
  }
  # ggreedy ROW MODEL DEC MAXLEN BATCH [FIRST]: greedy decoding on both sides
  ggreedy() {
    local first=()
    [[ -z ${6:-} ]] || first=(--first "$6")
    record "$1" s2s "$BENCH" greedy "$2" "$3" --batch "$5" --max-len "$4" --threads "$THREADS" --runs "$RUNS" \
      "${first[@]}"
    if [[ $have_torch == 1 ]]; then
      record "$1" torch "$PYTHON" bench/torch_bench.py greedy "$2" "$3" --batch "$5" --max-len "$4" \
        --threads "$THREADS" --runs "$RUNS" "${first[@]}"
    else
      na "$1" torch "no torch"
    fi
  }
  GMODELS=(gru train-gru "{$BASE}" tf train-transformer "{$BASE, \"arch\": \"transformer\"}")
  for ((m = 0; m < ${#GMODELS[@]}; m += 3)); do
    f=$OUT/${GMODELS[m + 1]}.s2s
    [[ -f $f ]] || init "${GMODELS[m + 1]}" "${GMODELS[m + 2]}" || die "growth: cannot write $f (needs torch_ref.py init)"
  done
  for L in "${GLENS[@]}"; do
    nb=$(((GTOK + GB * L - 1) / (GB * L)))
    say "growth: length $L: $nb synthetic batches of $GB x $L, $GSENT sentences"
    record "grow-synth-$L" s2s "$BENCH" synth -o "$G/len$L" --src-vocab "$VS" --tgt-vocab "$VT" --len "$L" \
      --batch "$GB" --batches "$nb" --sentences "$GSENT" --seed 1
    for ((m = 0; m < ${#GMODELS[@]}; m += 3)); do
      gtrain "grow-train-${GMODELS[m]}-$L" "$G/len$L/batches.safetensors" "$OUT/${GMODELS[m + 1]}.s2s"
    done
    for ((m = 0; m < ${#GMODELS[@]}; m += 3)); do
      ggreedy "grow-greedy-${GMODELS[m]}-$L" "$OUT/${GMODELS[m + 1]}.s2s" "$G/len$L/dec.safetensors" "$L" 1
    done
  done
  # target vocabularies: the four specials of the real one, then placeholder words
  LV=10
  nb=$(((GTOK + GB * LV - 1) / (GB * LV)))
  for V in "${GVOCABS[@]}"; do
    say "growth: target vocabulary $V: $nb synthetic batches of $GB x $LV"
    { head -n 4 "$DATA/vocab.tgt"; awk -v n="$V" 'BEGIN { for (i = 4; i < n; i++) printf "w%d\t1\n", i }'; } \
      >"$G/vocab$V.tgt"
    record "grow-synth-v$V" s2s "$BENCH" synth -o "$G/vocab$V" --src-vocab "$VS" --tgt-vocab "$V" --len "$LV" \
      --batch "$GB" --batches "$nb" --seed 1
    if [[ $have_torch == 1 ]] && "$PYTHON" scripts/torch_ref.py init --config "{$BASE}" \
      --src-vocab-file "$DATA/vocab.src" --tgt-vocab-file "$G/vocab$V.tgt" --seed 1 -o "$G/vocab$V.s2s" \
      2>"$G/vocab$V.init.err"; then
      cmdline "$PYTHON" scripts/torch_ref.py init --config "{$BASE}" --src-vocab-file "$DATA/vocab.src" \
        --tgt-vocab-file "$G/vocab$V.tgt" --seed 1 -o "$G/vocab$V.s2s" >>"$CMDS"
      gtrain "grow-vocab-$V" "$G/vocab$V/batches.safetensors" "$G/vocab$V.s2s"
    else
      na "grow-vocab-$V" s2s "no model file (needs torch_ref.py init)"
    fi
  done
  for Bz in "${GBATCHES[@]}"; do
    say "growth: greedy batch $Bz: $GDEC sentences of the decoding set"
    ggreedy "grow-batch-$Bz" "$OUT/train-gru.s2s" "$SET/dec.safetensors" "$MAXLEN" "$Bz" "$GDEC"
  done
  GROWTH_S=$(($(date +%s) - GT0))
  say "growth: $GROWTH_S s"
fi

T1=$(date +%s)
say "measured in $((T1 - T0)) s; writing bench/results.md"
"$PYTHON" bench/report.py "$RES" bench/results.md --commands "$CMDS" --seconds $((T1 - T0)) \
  --threads "$THREADS" --data "$DATA" --notes bench/notes.md --growth-seconds "$GROWTH_S"
if [[ ,$ROWS, == *,growth,* ]]; then
  if command -v gnuplot >/dev/null; then
    bench/plot-growth.sh "$RES" bench >&2 || say "growth: plots not drawn"
  else
    say "growth: no gnuplot: plots not drawn (bench/plot-growth.sh)"
  fi
fi
