#!/usr/bin/env bash
# Writes extra dev sets (TSV, source<TAB>target a line) from a directory written by
# `s2s prepare`, for looking at quality on longer and rarer sentences with `s2s eval`.
# Deterministic: every set is a fixed function of valid.tsv and test.tsv.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/devsets.sh PREPARED_DIR OUTDIR

Reads PREPARED_DIR/valid.tsv and PREPARED_DIR/test.tsv (source<TAB>target a line, as
s2s prepare writes them) and writes into OUTDIR (created when absent):
  joined2.tsv  the lines of valid.tsv then test.tsv taken two at a time (lines 1-2,
               3-4, ...; a last incomplete group is left out), the sources joined with
               a space and the targets joined with a space
  joined3.tsv  the same three at a time
  long.tsv     the test pairs whose source has at least 12 words
  names.tsv    the test pairs whose source has a word starting with a capital A-Z
               other than its first word, or a digit 0-9
Words are the source's whitespace-separated tokens. Prints each set's line count.
USAGE
}

die() {
    echo "devsets.sh: $*" >&2
    exit 1
}

if [[ $# -ge 1 && ($1 == -h || $1 == --help) ]]; then
    usage
    exit 0
fi
if [[ $# -ne 2 ]]; then
    echo "devsets.sh: expected PREPARED_DIR OUTDIR, got $# arguments (see scripts/devsets.sh --help)" >&2
    exit 2
fi
prepared=$1
outdir=$2
for split in valid test; do
    [[ -f $prepared/$split.tsv ]] || die "$prepared/$split.tsv: no such file"
done
mkdir -p "$outdir"

# Bytes, not characters: [A-Z] and [0-9] are the ASCII ranges in any locale.
export LC_ALL=C

# joined N: groups of N consecutive lines of the input, sources and targets each
# joined with a space; columns after the second are dropped.
joined() {
    awk -F'\t' -v n="$1" '
        { k = (NR - 1) % n
          src = k ? src " " $1 : $1
          tgt = k ? tgt " " $2 : $2
          if (k == n - 1) print src "\t" tgt }'
}

cat "$prepared/valid.tsv" "$prepared/test.tsv" | joined 2 > "$outdir/joined2.tsv"
cat "$prepared/valid.tsv" "$prepared/test.tsv" | joined 3 > "$outdir/joined3.tsv"

# The long tail: sources of 12 words or more.
awk -F'\t' 'split($1, w, " ") >= 12' "$prepared/test.tsv" > "$outdir/long.tsv"

# Names and numbers: a capitalized word after the first, or a digit anywhere.
awk -F'\t' '{
        n = split($1, w, " ")
        keep = $1 ~ /[0-9]/
        for (i = 2; i <= n && !keep; i++)
            keep = w[i] ~ /^[A-Z]/
        if (keep) print
    }' "$prepared/test.tsv" > "$outdir/names.tsv"

for set in joined2 joined3 long names; do
    printf '%s.tsv\t%d\n' "$set" "$(wc -l < "$outdir/$set.tsv")"
done
