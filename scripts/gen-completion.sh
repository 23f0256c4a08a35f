#!/usr/bin/env bash
# Writes the bash completion of s2s, generated from the binary's own option tables.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/gen-completion.sh S2S OUT

Runs `S2S --dump-options` and `S2S COMMAND --dump-options` (the command list and each
command's option table: src/base/opt.h) and writes to OUT a bash completion script for
s2s (installed as share/bash-completion/completions/s2s): the commands after `s2s `,
each command's options after `s2s COMMAND -`, the values of an option that has a fixed
set of them (--arch rnn|transformer), file names after an option whose value names a
file (FILE, MODEL, OUT, ...: scripts/completion.awk) and for the arguments of a command
that takes some, directory names after one that names a directory (DIR).
USAGE
}

die() {
    echo "gen-completion.sh: $*" >&2
    exit 1
}

case "${1:-}" in
-h | --help)
    usage
    exit 0
    ;;
esac
[ $# -eq 2 ] || {
    echo "gen-completion.sh: expected S2S OUT, got $# arguments (see scripts/gen-completion.sh --help)" >&2
    exit 2
}
s2s=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$s2s" --dump-options >"$tmp/commands" || die "$s2s --dump-options failed"
[ "$(head -n 1 "$tmp/commands")" = "s2s-commands	1" ] || die "$s2s --dump-options: not a command list of version 1"
files=("$tmp/commands")
for cmd in $(awk -F '\t' '$1 == "command" { print $2 }' "$tmp/commands"); do
    "$s2s" "$cmd" --dump-options >"$tmp/$cmd" || die "$s2s $cmd --dump-options failed"
    [ "$(head -n 1 "$tmp/$cmd")" = "s2s-options	1" ] || die "$s2s $cmd --dump-options: not an option table of version 1"
    files+=("$tmp/$cmd")
done
awk -F '\t' -f "$here/completion.awk" "${files[@]}" >"$tmp/out"
bash -n "$tmp/out" || die "the script written is not valid bash"
mkdir -p "$(dirname "$out")"
mv "$tmp/out" "$out"
