#!/usr/bin/env bash
# Translates and scores a test set with `s2s eval` and appends one line to a results
# table, for comparing models and decoding settings from scripts.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/eval.sh [-r RESULTS] MODEL [TSV] [-- EVAL_OPTION...]

Runs `s2s eval MODEL TSV --json` (with the EVAL_OPTIONs, e.g. -- --beam 1) and appends
one tab-separated line to RESULTS (default results.tsv; a header line first when the
file is new): date (UTC), model, test set, model configuration, decoding options, BLEU,
chrF2, perplexity, decoding seconds, lines. TSV defaults to test.tsv of the data
directory the model was trained on (the "data" entry of `s2s info MODEL`). Prints the
same figures on one line. The s2s binary is $S2S, else the repository's ./s2s, else s2s
on PATH.
USAGE
}

die() {
    echo "eval.sh: $*" >&2
    exit 1
}

bad_usage() {
    echo "eval.sh: $* (see scripts/eval.sh --help)" >&2
    exit 2
}

results=results.tsv
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    -r)
        [ $# -ge 2 ] && [ -n "$2" ] || bad_usage "-r needs a file name"
        results=$2
        shift 2
        ;;
    --) shift; break ;;
    -*) bad_usage "unknown option '$1'" ;;
    *) args+=("$1"); shift ;;
    esac
done
extra=("$@")
if [ ${#args[@]} -lt 1 ] || [ ${#args[@]} -gt 2 ]; then
    bad_usage "expected MODEL [TSV], got ${#args[@]} arguments"
fi
model=${args[0]}

s2s=${S2S:-}
if [ -z "$s2s" ]; then
    here=$(cd "$(dirname "$0")/.." && pwd)
    if [ -x "$here/s2s" ]; then s2s=$here/s2s; else s2s=$(command -v s2s || true); fi
fi
[ -n "$s2s" ] && [ -x "$s2s" ] || die "no s2s binary (build it with make, or set S2S)"
[ -f "$model" ] || die "$model: no such model file"

info=$("$s2s" info "$model") || exit 1
field() { # the value of "  KEY: VALUE" in the info output
    printf '%s\n' "$info" | sed -n "s/^  $1: //p" | head -n 1
}
if [ ${#args[@]} -eq 2 ]; then
    tsv=${args[1]}
else
    data=$(field data)
    [ -n "$data" ] || die "$model: no training data directory in its history; give TSV"
    tsv=$data/test.tsv
    [ -f "$tsv" ] || die "$tsv: no such file (the model's data directory has no test split); give TSV"
fi

if [ "$(field arch)" = transformer ]; then
    config="transformer $(field layers)+$(field layers) d $(field model_dim) ff $(field ff) heads $(field heads)"
    config="$config $(field norm)-norm $(field positions)"
    [ "$(field share_embeddings)" = true ] && config="$config shared-emb"
else
    config="$(field cell) $(field layers)x$(field hidden)"
    [ "$(field bidir)" = true ] && config="$config bidir"
    config="$config emb $(field emb) dec $(field dec_hidden) $(field attention) $(field attn) out $(field deep_out)"
fi
steps=$(field steps)
[ -n "$steps" ] && config="$config, $steps steps"

json=$("$s2s" eval "$model" "$tsv" --json ${extra[@]+"${extra[@]}"}) || exit 1
num() { # a number of the one-line JSON object
    printf '%s\n' "$json" | sed -n "s/.*\"$1\": \([-0-9.eE+]*\).*/\1/p"
}
bleu=$(num bleu)
chrf=$(num chrf)
ppl=$(num perplexity)
secs=$(num decode_seconds)
lines=$(num lines)
[ -n "$bleu" ] && [ -n "$chrf" ] && [ -n "$lines" ] || die "unexpected output of s2s eval --json: $json"
prec=$(printf '%s\n' "$json" | sed -n 's/.*"precision": "\([a-z0-9]*\)".*/\1/p')
opts="beam $(num beam), length penalty $(num length_penalty), $prec"
[ ${#extra[@]} -gt 0 ] && opts="$opts (${extra[*]})"

if [ ! -s "$results" ]; then
    printf 'date\tmodel\ttest\tconfig\tdecoding\tbleu\tchrf\tperplexity\tdecode_s\tlines\n' >>"$results"
fi
printf '%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$model" \
    "$tsv" "$config" "$opts" "$bleu" "$chrf" "$ppl" "$secs" "$lines" >>"$results"
printf 'BLEU %.2f, chrF2 %.2f, perplexity %.2f, %s lines in %s s (%s); appended to %s\n' \
    "$bleu" "$chrf" "$ppl" "$lines" "$secs" "$opts" "$results"
