#!/usr/bin/env bash
# Writes the manual pages of s2s, generated from the binary's own option tables:
# s2s.1 (the commands) and s2s-COMMAND.1 for each command (its help, option by option).
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/gen-man.sh S2S OUTDIR

Runs `S2S --dump-options` and `S2S COMMAND --dump-options` (the command list and each
command's option table, as --help prints them: src/base/opt.h) and writes OUTDIR/s2s.1
and OUTDIR/s2s-COMMAND.1 for each command: NAME, SYNOPSIS, DESCRIPTION, OPTIONS (every
option of `s2s COMMAND --help` with its help), NOTES and SEE ALSO. The string @DOCDIR@
in the pages stands for the directory of the installed documentation; scripts/install.sh
replaces it.
USAGE
}

. "$(dirname "$0")/option-tables.sh"
option_tables gen-man.sh usage "S2S OUTDIR" "$@"
mkdir -p "$out"

# The roff of one page, from the command list (first file) and a command's table
# (second file; none for s2s.1).
render() {
    awk -F '\t' -f "$here/man.awk" "$@"
}

# the pages of commands that are gone go too; s2s.1 is written last (make's target)
rm -f "$out"/s2s.1 "$out"/s2s-*.1
for cmd in $commands; do
    render -v page="$cmd" "$tables/commands" "$tables/$cmd" >"$tables/s2s-$cmd.1"
    mv "$tables/s2s-$cmd.1" "$out/s2s-$cmd.1"
done
render -v page=s2s "$tables/commands" >"$tables/s2s.1"
mv "$tables/s2s.1" "$out/s2s.1"
