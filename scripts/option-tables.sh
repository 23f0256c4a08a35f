# Sourced by gen-man.sh and gen-completion.sh: what both do before they write anything.
#
#   option_tables NAME USAGE_FN ARGS_WANTED "$@"
#
# answers -h/--help with USAGE_FN, checks that the script got its two arguments
# (S2S and an output), and reads the binary's option tables into a temporary directory
# ($tables, removed on exit): $tables/commands (`S2S --dump-options`, the command list)
# and $tables/COMMAND (`S2S COMMAND --dump-options`) for each command, each checked to be
# of version 1 (src/base/opt.h). Sets s2s, out, here, tables and commands (the names).

die() {
    echo "$script: $*" >&2
    exit 1
}

option_tables() {
    script=$1
    local usage_fn=$2 wanted=$3
    shift 3
    case "${1:-}" in
    -h | --help)
        "$usage_fn"
        exit 0
        ;;
    esac
    [ $# -eq 2 ] || {
        echo "$script: expected $wanted, got $# arguments (see scripts/$script --help)" >&2
        exit 2
    }
    s2s=$1
    out=$2
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    tables=$(mktemp -d)
    trap 'rm -rf "$tables"' EXIT
    "$s2s" --dump-options >"$tables/commands" || die "$s2s --dump-options failed"
    [ "$(head -n 1 "$tables/commands")" = "s2s-commands	1" ] || die "$s2s --dump-options: not a command list of version 1"
    commands=$(awk -F '\t' '$1 == "command" { print $2 }' "$tables/commands")
    local cmd
    for cmd in $commands; do
        "$s2s" "$cmd" --dump-options >"$tables/$cmd" || die "$s2s $cmd --dump-options failed"
        [ "$(head -n 1 "$tables/$cmd")" = "s2s-options	1" ] ||
            die "$s2s $cmd --dump-options: not an option table of version 1"
    done
}
