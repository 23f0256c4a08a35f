#!/usr/bin/env bash
# Draws the growth rows of `make bench` (BENCH_ROWS=growth) from bench/out/results.jsonl
# into four PNGs with gnuplot, s2s and PyTorch on each.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: bench/plot-growth.sh [RESULTS.jsonl [OUTDIR]]

From RESULTS.jsonl (default bench/out/results.jsonl, written by bench/run.sh with
BENCH_ROWS=growth) into OUTDIR (default bench/):
  growth-train-length.png  training target tokens/s against the source = target length
                           (reference model and Transformer)
  growth-greedy-length.png greedy ms per sentence at batch 1 against the length
  growth-vocab.png         training target tokens/s against the target vocabulary
  growth-batch.png         greedy sentences/s against the batch size
Both axes are logarithmic; a plot whose rows are missing is not drawn. Each PNG is
replaced only once it is drawn. Needs gnuplot (Debian: gnuplot-nox).
USAGE
}

die() {
    echo "plot-growth.sh: $*" >&2
    exit 1
}

case "${1:-}" in
-h | --help) usage; exit 0 ;;
esac
[ $# -le 2 ] || { echo "plot-growth.sh: expected at most RESULTS.jsonl and OUTDIR, got $# arguments" >&2; exit 2; }
res=${1:-bench/out/results.jsonl}
outdir=${2:-bench}
command -v gnuplot >/dev/null || die "gnuplot is not installed (Debian: apt-get install gnuplot-nox)"
[ -f "$res" ] || die "$res: no such file"
[ -d "$outdir" ] || die "$outdir: no such directory"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One data file per plot: X, then the value of each (model, implementation) in the
# order the plot names them ("NaN" where a row is missing or not available).
awk -v dir="$tmp" '
function val(key,   i, rest) {
    i = index($0, "\"" key "\": ")
    if (!i) return ""
    rest = substr($0, i + length(key) + 4)
    sub(/[,}].*/, "", rest)
    gsub(/"/, "", rest)
    return rest
}
{
    row = val("row"); impl = val("impl")
    if (row !~ /^grow-/ || val("na") != "") next
    n = split(row, p, "-")
    x = p[n] + 0
    if (row ~ /^grow-train-/)       { f = "train-length"; key = p[3] "-" impl; v = val("tok_s") }
    else if (row ~ /^grow-greedy-/) { f = "greedy-length"; key = p[3] "-" impl; v = 1000 / val("sent_s") }
    else if (row ~ /^grow-vocab-/)  { f = "vocab"; key = impl; v = val("tok_s") }
    else if (row ~ /^grow-batch-/)  { f = "batch"; key = impl; v = val("sent_s") }
    else next
    data[f, x, key] = v
    if (!((f, x) in seen)) { seen[f, x] = 1; xs[f] = xs[f] " " x }
}
END {
    cols["train-length"] = "gru-s2s gru-torch tf-s2s tf-torch"
    cols["greedy-length"] = cols["train-length"]
    cols["vocab"] = "s2s torch"
    cols["batch"] = "s2s torch"
    for (f in xs) {
        m = split(xs[f], xv, " ")
        # ascending X (insertion sort: a handful of values)
        for (i = 2; i <= m; i++)
            for (j = i; j > 1 && xv[j - 1] + 0 > xv[j] + 0; j--) { t = xv[j]; xv[j] = xv[j - 1]; xv[j - 1] = t }
        k = split(cols[f], c, " ")
        for (i = 1; i <= m; i++) {
            line = xv[i]
            for (j = 1; j <= k; j++)
                line = line " " (((f, xv[i], c[j]) in data) ? data[f, xv[i], c[j]] : "NaN")
            print line > (dir "/" f ".dat")
        }
    }
}' "$res"

drawn=0
# plot NAME TITLE XLABEL YLABEL PLOT-CLAUSES: draws OUTDIR/growth-NAME.png from NAME.dat
plot() {
    local name=$1 title=$2 xlabel=$3 ylabel=$4 clauses=$5
    [ -s "$tmp/$name.dat" ] || { echo "plot-growth.sh: no $name rows in $res" >&2; return 0; }
    cat >"$tmp/$name.gp" <<GP
set terminal pngcairo size 900,600 font "sans,11"
set output "$tmp/$name.png"
set title "$title"
set grid
set key outside right top
set logscale xy 2
set offsets graph 0.06, graph 0.06, 0, 0
set format y "%g"
set xlabel "$xlabel"
set ylabel "$ylabel"
set xtics ($(awk '{ printf "%s\"%s\" %s", (NR > 1 ? ", " : ""), $1, $1 }' "$tmp/$name.dat"))
D = "$tmp/$name.dat"
plot $clauses
GP
    gnuplot "$tmp/$name.gp" 2>"$tmp/$name.err" || die "gnuplot failed: $(head -n 3 "$tmp/$name.err" | tr '\n' ' ')"
    [ -s "$tmp/$name.png" ] || die "gnuplot wrote no image for $name"
    local out="$outdir/growth-$name.png"
    cp "$tmp/$name.png" "$out.tmp.$$" && mv -f "$out.tmp.$$" "$out" || { rm -f "$out.tmp.$$"; die "$out: cannot write"; }
    echo "plot-growth.sh: $out"
    drawn=$((drawn + 1))
}

S2S='lw 2 pt 7 lc rgb "#1f4e9c"'
TORCH='lw 2 pt 5 lc rgb "#c0392b"'
S2S_TF='lw 2 pt 9 dt 2 lc rgb "#1f4e9c"'
TORCH_TF='lw 2 pt 11 dt 2 lc rgb "#c0392b"'
four="D using 1:2 with linespoints $S2S title \"s2s, reference\", \
D using 1:3 with linespoints $TORCH title \"PyTorch, reference\", \
D using 1:4 with linespoints $S2S_TF title \"s2s, Transformer\", \
D using 1:5 with linespoints $TORCH_TF title \"PyTorch, Transformer\""
two="D using 1:2 with linespoints $S2S title \"s2s\", D using 1:3 with linespoints $TORCH title \"PyTorch\""

plot train-length "Training against length (source = target length)" "tokens per sentence" \
    "target tokens/s" "$four"
plot greedy-length "Greedy decoding, batch 1, against length (steps = source length)" \
    "tokens per sentence" "ms per sentence" "$four"
plot vocab "Training (reference model) against the target vocabulary" "target vocabulary" \
    "target tokens/s" "$two"
plot batch "Greedy decoding (reference model) against the batch size" "sentences per batch" \
    "sentences/s" "$two"
[ "$drawn" -gt 0 ] || die "$res: no growth rows (run bench/run.sh with BENCH_ROWS=growth)"
