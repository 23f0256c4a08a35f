#!/usr/bin/env bash
# Trains one model per attention mechanism and cell for the same budget (training steps,
# or minutes) on the same prepared data, and prints a Markdown table: mechanism, cell,
# parameters, target tokens/s, valid perplexity, test BLEU (the shape of Table 4 of
# Luong et al., 2015). A step budget gives every mechanism the same batches, whatever
# else runs on the machine; tokens/s is the median over the steps of each run.
#
#   scripts/compare-attention.sh DATA OUTDIR [options] [-- extra s2s train options]
#
# DATA is a directory written by `s2s prepare`, or a corpus file (fra.txt); a corpus is
# first sampled (--pairs N random pairs, fixed seed) and prepared into OUTDIR/data.
# Every model, log and score lands in OUTDIR; the table goes to stdout and to
# OUTDIR/table.md. A run whose model already exists in OUTDIR is not trained again,
# so an interrupted comparison continues where it stopped.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/compare-attention.sh DATA OUTDIR [options] [-- s2s train options]
options:
  --steps N          training steps per model (default 1000)
  --minutes M        a time budget per model instead of --steps
  --beam K           beam size of the test BLEU (default 1: greedy)
  --speed-steps N    time N more steps of each configuration on its own, one
                     after the other, for the tok/s column (default 0: the
                     median of the training steps, which shares the machine
                     with whatever else runs)
  --pairs N          corpus file only: sample N pairs before preparing (default 60000)
  --cells "C..."     cells to compare (default "gru lstm")
  --only "NAME..."   mechanisms to run, by the names of the table (default: all)
  --threads T        threads per run (default: all cores)
  --s2s PATH         the s2s binary (default ./s2s)
EOF
}

steps=1000 minutes="" beam=1 speed_steps=0 pairs=60000 cells="gru lstm" only="" threads=0 s2s=./s2s
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --steps) steps=${2:?--steps needs a value}; shift 2 ;;
    --minutes) minutes=${2:?--minutes needs a value}; shift 2 ;;
    --beam) beam=${2:?--beam needs a value}; shift 2 ;;
    --speed-steps) speed_steps=${2:?--speed-steps needs a value}; shift 2 ;;
    --pairs) pairs=${2:?--pairs needs a value}; shift 2 ;;
    --cells) cells=${2:?--cells needs a value}; shift 2 ;;
    --only) only=${2:?--only needs a value}; shift 2 ;;
    --threads) threads=${2:?--threads needs a value}; shift 2 ;;
    --s2s) s2s=${2:?--s2s needs a value}; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "compare-attention: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
    esac
done
extra=("${extra[@]+"${extra[@]}"}")
if [ ${#args[@]} -ne 2 ]; then
    usage >&2
    exit 2
fi
data=${args[0]} out=${args[1]}
[ -x "$s2s" ] || { echo "compare-attention: $s2s: not an executable (run make, or pass --s2s)" >&2; exit 1; }
[ -e "$data" ] || { echo "compare-attention: $data: no such file or directory" >&2; exit 1; }
mkdir -p "$out"
if [ -n "$minutes" ]; then budget=(--time "$minutes") what="$minutes min"; else budget=(--steps "$steps") what="$steps steps"; fi

# The mechanisms: table name, then s2s train options.
mechanisms=(
    "bahdanau|--attention bahdanau"
    "luong-dot|--attention luong-dot"
    "luong-dot K=D|--attention luong-dot --hidden HALF"
    "luong-general|--attention luong-general"
    "luong-concat|--attention luong-concat"
    "scaled-dot|--attention scaled-dot"
    "multihead-4|--attention multihead --heads 4"
    "local-m general|--attention luong-general --local m --window 5"
    "local-p general|--attention luong-general --local p --window 5"
    "general + feed|--attention luong-general --input-feed"
    "local-p general + feed|--attention luong-general --local p --window 5 --input-feed"
)

if [ -d "$data" ]; then
    prepared=$data
else
    prepared=$out/data
    if [ ! -f "$prepared/prepare.json" ]; then
        echo "compare-attention: sampling $pairs pairs of $data and preparing them into $prepared" >&2
        shuf -n "$pairs" --random-source=<(yes) "$data" >"$out/corpus.txt"
        "$s2s" prepare "$out/corpus.txt" -o "$prepared" 2>"$out/prepare.err"
    fi
fi

# field NAME LINE: the number after "NAME": in a JSON line
field() { sed -n "s/.*\"$1\": \([-0-9.e+]*\).*/\1/p" <<<"$2"; }

table=$out/table.md
{
    echo "| mechanism | cell | params | target tok/s | valid ppl | test BLEU |"
    echo "| --- | --- | ---: | ---: | ---: | ---: |"
} >"$table.tmp"

for cell in $cells; do
    for m in "${mechanisms[@]}"; do
        name=${m%%|*} opts=${m#*|}
        if [ -n "$only" ] && ! grep -qx -- "$name" <<<"$(tr ' ' '\n' <<<"$only" | sed 's/_/ /g')"; then
            continue
        fi
        tag=$(tr ' +=' '___' <<<"$cell-$name")
        # HALF: half the decoder size, so that a bidirectional encoder's states have the
        # decoder's size and luong-dot needs no key projection
        dec=$(printf '%s\n' "${extra[@]+"${extra[@]}"}" | sed -n '/^--dec-hidden$/{n;p}' | tail -n 1)
        opts=${opts//HALF/$(( ${dec:-256} / 2 ))}
        model=$out/$tag.s2s
        if [ ! -f "$model.log.jsonl" ] || ! grep -q '"event": "stop"' "$model.log.jsonl"; then
            echo "compare-attention: training $cell $name ($what)" >&2
            # shellcheck disable=SC2086
            "$s2s" train "$prepared" -o "$model" --cell "$cell" "${budget[@]}" --threads "$threads" \
                --quiet --force "${extra[@]+"${extra[@]}"}" $opts 2>"$out/$tag.train.err"
        fi
        log=$model.log.jsonl
        # throughput: the median of the steps' target tokens/s
        speed_log=$log
        if [ "$speed_steps" -gt 0 ]; then
            speed_log=$out/$tag.speed.s2s.log.jsonl
            if [ ! -f "$speed_log" ]; then
                # shellcheck disable=SC2086
                "$s2s" train "$prepared" -o "$out/$tag.speed.s2s" --cell "$cell" --steps "$speed_steps" \
                    --threads "$threads" --quiet --force --valid-every 0 --valid-max 1 \
                    "${extra[@]+"${extra[@]}"}" $opts 2>/dev/null
                rm -f "$out/$tag.speed.s2s" "$out/$tag.speed.s2s.last" "$out/$tag.speed.s2s.state"
            fi
        fi
        tok_s=$(grep '"event": "step"' "$speed_log" | sed -n 's/.*"tok_s": \([0-9]*\).*/\1/p' | sort -n |
            awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }')
        # valid perplexity of the best checkpoint (the one MODEL holds)
        best=$(grep '"event": "valid"' "$log" | grep '"best": true' | tail -n 1)
        ppl=$(field ppl "$best")
        params=$("$s2s" info "$model" | sed -n 's/^parameters: \([0-9]*\).*/\1/p')
        "$s2s" eval "$model" "$prepared/test.tsv" --beam "$beam" --threads "$threads" >"$out/$tag.eval" 2>/dev/null
        bleu=$(sed -n 's/^BLEU = \([0-9.]*\).*/\1/p' "$out/$tag.eval" | head -n 1)
        printf '| %s | %s | %s | %s | %.2f | %s |\n' "$name" "$cell" "$params" "$tok_s" "$ppl" "$bleu" \
            >>"$table.tmp"
    done
done
mv "$table.tmp" "$table"
cat "$table"
