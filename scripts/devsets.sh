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
  unseen.tsv   names fra.txt never holds: the pairs of valid.tsv then test.tsv where
               "Tom" or "Mary" is a word of both sides, each such word (both sides)
               replaced by a name that fra.txt lacks (Tom by a man's, Mary by a
               woman's, taken in turn from fixed lists; none starts with a vowel,
               so French elision is unchanged)
  numbers.tsv  the pairs of valid.tsv then test.tsv whose source has a word of
               digits 0-9 (not part of a decimal or a time)
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

# Unseen names: Tom and Mary, words of both sides, replaced (whole words only).
cat "$prepared/valid.tsv" "$prepared/test.tsv" | awk -F'\t' '
    function word(s, w, i) {
        return (i == 1 || substr(s, i - 1, 1) !~ /[A-Za-z0-9]/) && substr(s, i + length(w), 1) !~ /[A-Za-z0-9]/
    }
    function has(s, w,    i, off) {
        for (off = 0; (i = index(substr(s, off + 1), w)) > 0; off += i)
            if (word(s, w, off + i)) return 1
        return 0
    }
    function swap(s, w, by,    i, off, out) {
        out = ""
        while ((i = index(s, w)) > 0) {
            if (word(" " s, w, i + 1)) { out = out substr(s, 1, i - 1) by }
            else { out = out substr(s, 1, i - 1 + length(w)) }
            s = substr(s, i + length(w))
        }
        return out s
    }
    BEGIN {
        nm = split("Kazimierz Radoslav Zbigniew Torvald Jaroslav Malakai Teodor Brynjar Desmond Lorcan Benedikt Casimir Wenceslas", men, " ")
        nw = split("Siobhan Thandiwe Leocadia Wilhelmina Nkechi Mirela Rosalind Fenella Dagny Dorotea Florentyna Gwendolyn Kunigunde Leopoldine Perpetua Ragnhild Sigrun Vasilisa Xiomara Zenobia Cosima Gunnhild Jovana Mihaela Niamh", women, " ")
    }
    {
        src = $1; tgt = $2; hit = 0
        if (has(src, "Tom") && has(tgt, "Tom")) { by = men[k % nm + 1]; src = swap(src, "Tom", by); tgt = swap(tgt, "Tom", by); hit = 1 }
        if (has(src, "Mary") && has(tgt, "Mary")) { by = women[k % nw + 1]; src = swap(src, "Mary", by); tgt = swap(tgt, "Mary", by); hit = 1 }
        if (hit) { print src "\t" tgt; k++ }
    }' > "$outdir/unseen.tsv"

# Numbers: a word of digits (not a decimal like 3.5 or a time like 2:30).
cat "$prepared/valid.tsv" "$prepared/test.tsv" |
    awk -F'\t' '$1 ~ /(^|[^0-9A-Za-z.,:])[0-9]+([^0-9A-Za-z.,:]|[.,:]([^0-9]|$)|$)/' > "$outdir/numbers.tsv"

for set in joined2 joined3 long names unseen numbers; do
    printf '%s.tsv\t%d\n' "$set" "$(wc -l < "$outdir/$set.tsv")"
done
