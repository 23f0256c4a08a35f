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

. "$(dirname "$0")/option-tables.sh"
option_tables gen-completion.sh usage "S2S OUT" "$@"

files=("$tables/commands")
for cmd in $commands; do
    files+=("$tables/$cmd")
done
awk -F '\t' -f "$here/completion.awk" "${files[@]}" >"$tables/out"
bash -n "$tables/out" || die "the script written is not valid bash"
mkdir -p "$(dirname "$out")"
mv "$tables/out" "$out"
