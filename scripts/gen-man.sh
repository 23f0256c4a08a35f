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

die() {
    echo "gen-man.sh: $*" >&2
    exit 1
}

case "${1:-}" in
-h | --help)
    usage
    exit 0
    ;;
esac
[ $# -eq 2 ] || {
    echo "gen-man.sh: expected S2S OUTDIR, got $# arguments (see scripts/gen-man.sh --help)" >&2
    exit 2
}
s2s=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)

commands=$("$s2s" --dump-options) || die "$s2s --dump-options failed"
[ "$(printf '%s\n' "$commands" | head -n 1)" = "s2s-commands	1" ] ||
    die "$s2s --dump-options: not a command list of version 1"
mkdir -p "$out"

# The roff of one page, from the command list (first file) and a command's table
# (second file; none for s2s.1).
render() {
    awk -F '\t' -f "$here/man.awk" "$@"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "$commands" >"$tmp/commands"
# the pages of commands that are gone go too; s2s.1 is written last (make's target)
rm -f "$out"/s2s.1 "$out"/s2s-*.1
for cmd in $(awk -F '\t' '$1 == "command" { print $2 }' "$tmp/commands"); do
    "$s2s" "$cmd" --dump-options >"$tmp/$cmd" || die "$s2s $cmd --dump-options failed"
    [ "$(head -n 1 "$tmp/$cmd")" = "s2s-options	1" ] || die "$s2s $cmd --dump-options: not an option table of version 1"
    render -v page="$cmd" "$tmp/commands" "$tmp/$cmd" >"$tmp/s2s-$cmd.1"
    mv "$tmp/s2s-$cmd.1" "$out/s2s-$cmd.1"
done
render -v page=s2s "$tmp/commands" >"$tmp/s2s.1"
mv "$tmp/s2s.1" "$out/s2s.1"
