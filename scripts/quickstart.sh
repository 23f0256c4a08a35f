#!/usr/bin/env bash
# The first command for a new machine: checks (and, as root, installs) the Debian
# packages s2s needs, builds ./s2s, and runs the main job on the project's own small
# corpus, data/sample.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."

need=(build-essential pkg-config libopenblas-dev libutf8proc-dev libcriterion-dev libedit-dev zlib1g-dev libmicrohttpd-dev libdnnl-dev)
missing=()
for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "quickstart: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    else
        echo "quickstart: missing Debian packages; install them with:" >&2
        echo "  sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

make -j"$(nproc)" s2s
out=build/quickstart
rm -rf "$out"
mkdir -p "$out"

echo "== s2s train data/sample.tsv -o $out/model.s2s --steps 250   (default options; under a minute on 2 cores)"
# It prepares the corpus into $out/model.s2s.d/ and validates at every epoch end (the
# sample's epochs are 5 steps: every validation is in the log, a few are shown).
./s2s train data/sample.tsv -o "$out/model.s2s" --steps 250
echo "== the first training pairs, tokenized as the model sees them"
head -n 3 "$out/model.s2s.d/train.tsv" | cut -f1 | ./s2s tokenize --lang en --keep-case
head -n 3 "$out/model.s2s.d/train.tsv" | cut -f2 | ./s2s tokenize --lang fr --keep-case
echo "== s2s translate: three training sentences"
head -n 3 "$out/model.s2s.d/train.tsv" | cut -f1 | ./s2s translate "$out/model.s2s"
echo "== s2s eval on the training split (the model has memorised much of it)"
./s2s eval "$out/model.s2s" "$out/model.s2s.d/train.tsv"
echo "== s2s eval on the held-out test split (320 training pairs are far too few to generalise)"
./s2s eval "$out/model.s2s" "$out/model.s2s.d/test.tsv"
