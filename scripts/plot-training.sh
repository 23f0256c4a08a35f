#!/usr/bin/env bash
# Draws the curves of a training log (MODEL.log.jsonl of s2s train) into a PNG with
# gnuplot: loss, perplexity and validation BLEU against the step.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/plot-training.sh MODEL.log.jsonl OUT.png
       scripts/plot-training.sh --minutes OUT.png LOG.jsonl [LOG.jsonl...]

Three panels against the training step: the training loss (each step, and its mean over
the last 50 steps) with the validation loss; the training and validation perplexity
(log scale); the validation BLEU. With --minutes, one panel instead: the validation
BLEU of each log against the minutes of training (validation included, across
--resume), one curve per log, named after its model. OUT.png is replaced only once it
is drawn. Needs gnuplot (Debian: gnuplot-nox).
USAGE
}

die() {
    echo "plot-training.sh: $*" >&2
    exit 1
}

case "${1:-}" in
-h | --help) usage; exit 0 ;;
--minutes)
    shift
    if [ $# -lt 2 ]; then
        echo "plot-training.sh: --minutes expected OUT.png and at least one log, got $# arguments (see scripts/plot-training.sh --help)" >&2
        exit 2
    fi
    out=$1
    shift
    command -v gnuplot >/dev/null || die "gnuplot is not installed (Debian: apt-get install gnuplot-nox)"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    plots=""
    k=0
    for log in "$@"; do
        [ -f "$log" ] || die "$log: no such file"
        k=$((k + 1))
        # minutes and BLEU of each validation line ("elapsed": seconds since the run began)
        awk '/"event": "valid"/ {
                 e = $0; sub(/.*"elapsed": /, "", e); sub(/[,}].*/, "", e)
                 b = $0; sub(/.*"bleu": /, "", b); sub(/[,}].*/, "", b)
                 if (b != "null" && e != $0) printf "%.4f %s\n", e / 60, b
             }' "$log" >"$tmp/$k.dat"
        [ -s "$tmp/$k.dat" ] || die "$log: no validation with a BLEU (is it the MODEL.log.jsonl of s2s train?)"
        name=$(basename "$log" .log.jsonl)
        name=${name//\"/}
        plots="$plots${plots:+, }\"$tmp/$k.dat\" using 1:2 with linespoints lw 2 pt 7 title \"$name\""
    done
    cat >"$tmp/plot.gp" <<GP
set terminal pngcairo size 1000,600 font "sans,11"
set output "$tmp/out.png"
set title "s2s training: valid BLEU (greedy) against minutes"
set grid
set key bottom right
set xlabel "minutes"
set ylabel "BLEU"
set xrange [0:*]
plot $plots
GP
    gnuplot "$tmp/plot.gp" 2>"$tmp/gnuplot.err" || die "gnuplot failed: $(head -n 3 "$tmp/gnuplot.err" | tr '\n' ' ')"
    [ -s "$tmp/out.png" ] || die "gnuplot wrote no image"
    cp "$tmp/out.png" "$out.tmp.$$" && mv -f "$out.tmp.$$" "$out" || { rm -f "$out.tmp.$$"; die "$out: cannot write"; }
    echo "plot-training.sh: $out: $k logs"
    exit 0
    ;;
esac
if [ $# -ne 2 ] || [ -z "$1" ] || [ -z "$2" ]; then
    echo "plot-training.sh: expected MODEL.log.jsonl OUT.png, got $# arguments (see scripts/plot-training.sh --help)" >&2
    exit 2
fi
log=$1
out=$2
command -v gnuplot >/dev/null || die "gnuplot is not installed (Debian: apt-get install gnuplot-nox)"
[ -f "$log" ] || die "$log: no such file"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The log's lines are one JSON object each, written by s2s with `"key": value` pairs.
awk -v steps="$tmp/steps" -v valid="$tmp/valid" '
function val(key,   i, rest) {
    i = index($0, "\"" key "\": ")
    if (!i) return ""
    rest = substr($0, i + length(key) + 4)
    sub(/[,}].*/, "", rest)
    return rest
}
/"event": "step"/ {
    s = val("step"); l = val("loss"); p = val("ppl")
    if (s == "" || l == "") next
    n++; win[n % 50] = l; sum = 0; k = n < 50 ? n : 50
    for (j in win) sum += win[j]
    printf "%s %s %s %.6g\n", s, l, p, sum / k > steps
    ns++; if (s + 0 > last) last = s + 0
}
/"event": "valid"/ {
    s = val("step"); l = val("loss"); p = val("ppl"); b = val("bleu")
    if (s == "" || l == "") next
    printf "%s %s %s %s\n", s, l, p, (b == "" ? "NaN" : b) > valid
    nv++; if (s + 0 > last) last = s + 0
}
END { printf "%d %d %d\n", ns, nv, last > (steps ".count") }
' "$log"
read -r nsteps nvalid last <"$tmp/steps.count"
[ "$nsteps" -gt 0 ] || die "$log: no training steps (is it the MODEL.log.jsonl of s2s train?)"
[ "$nvalid" -gt 0 ] || : >"$tmp/valid"

title=$(basename "$log" .log.jsonl)
valid_plot() { # plot clause for the valid columns, or a no-data note
    if [ "$nvalid" -gt 0 ]; then echo "$1"; else echo "NaN title 'no validation yet'"; fi
}
cat >"$tmp/plot.gp" <<GP
set terminal pngcairo size 1000,1100 font "sans,11"
set output "$tmp/out.png"
set multiplot layout 3,1 title "s2s training: $title"
set grid
set key top right
set xlabel "step"
set xrange [0:$last]
set ylabel "loss (nats/token, as trained)"
plot "$tmp/steps" using 1:2 with lines lc rgb "#c8d8ef" title "train (each step)", \
     "$tmp/steps" using 1:4 with lines lw 2 lc rgb "#1f4e9c" title "train (mean of 50 steps)", \
     $(valid_plot "\"$tmp/valid\" using 1:2 with linespoints lw 2 pt 7 lc rgb \"#c0392b\" title \"valid\"")
set logscale y
set ylabel "perplexity"
plot "$tmp/steps" using 1:3 with lines lc rgb "#c8d8ef" title "train", \
     $(valid_plot "\"$tmp/valid\" using 1:3 with linespoints lw 2 pt 7 lc rgb \"#c0392b\" title \"valid\"")
unset logscale y
set ylabel "BLEU"
set key bottom right
plot $(valid_plot "\"$tmp/valid\" using 1:4 with linespoints lw 2 pt 7 lc rgb \"#2e7d32\" title \"valid BLEU (greedy)\"")
unset multiplot
GP
gnuplot "$tmp/plot.gp" 2>"$tmp/gnuplot.err" || die "gnuplot failed: $(head -n 3 "$tmp/gnuplot.err" | tr '\n' ' ')"
[ -s "$tmp/out.png" ] || die "gnuplot wrote no image"
cp "$tmp/out.png" "$out.tmp.$$" && mv -f "$out.tmp.$$" "$out" || { rm -f "$out.tmp.$$"; die "$out: cannot write"; }
echo "plot-training.sh: $out: $nsteps steps, $nvalid validations"
