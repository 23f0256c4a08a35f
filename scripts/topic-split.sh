#!/usr/bin/env bash
# Splits a Tatoeba file (English<TAB>Other[<TAB>attribution] a line) into the pairs of one
# topic and the rest, by a fixed word list matched on the English side: the data of the
# domain-adaptation experiment in docs/finetune.md.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/topic-split.sh CORPUS OUTDIR

Writes into OUTDIR (created when absent):
  topic.tsv  the lines of CORPUS whose English side (first column) contains, as a whole
             word in any case, one of the health words below
  rest.tsv   every other line
Lines keep their order and their columns. Prints both line counts.

The health words: doctor doctors hospital hospitals sick ill illness medicine medicines
pain hurt hurts fever nurse nurses patient patients disease cancer surgery headache
toothache flu injured health healthy pill pills dentist medical cough
USAGE
}

if [[ $# -ge 1 && ($1 == -h || $1 == --help) ]]; then
    usage
    exit 0
fi
if [[ $# -ne 2 ]]; then
    echo "topic-split.sh: expected CORPUS OUTDIR, got $# arguments (see scripts/topic-split.sh --help)" >&2
    exit 2
fi
corpus=$1
outdir=$2
[[ -f $corpus ]] || { echo "topic-split.sh: $corpus: no such file" >&2; exit 1; }
mkdir -p "$outdir"
words='doctor|doctors|hospital|hospitals|sick|ill|illness|medicine|medicines|pain|hurt|hurts|fever|nurse|nurses|patient|patients|disease|cancer|surgery|headache|toothache|flu|injured|health|healthy|pill|pills|dentist|medical|cough'
# awk: the English column, lowercased, split at every character that is not a letter
# or a digit (so "doctor's" holds "doctor"); a line is the topic's when one of its words is in the list.
LC_ALL=C awk -F'\t' -v words="$words" -v topic="$outdir/topic.tsv" -v rest="$outdir/rest.tsv" '
BEGIN { n = split(words, w, "|"); for (i = 1; i <= n; i++) list[w[i]] = 1; t = 0; r = 0 }
{
    s = tolower($1)
    m = split(s, tok, /[^a-z0-9]+/)
    hit = 0
    for (i = 1; i <= m; i++) if (tok[i] in list) { hit = 1; break }
    if (hit) { print > topic; t++ } else { print > rest; r++ }
}
END { printf "%s: %d lines\n%s: %d lines\n", topic, t, rest, r }
' "$corpus"
