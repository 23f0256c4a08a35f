#!/usr/bin/env bash
# Installs s2s (binary, manual pages, bash completion, documentation) under a prefix,
# or removes what it installed there: `make install` and `make uninstall` run it.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/install.sh install [--prefix P] [--destdir D] --bin S2S --man DIR --completion FILE
       scripts/install.sh uninstall [--prefix P] [--destdir D]

install copies, under D/P (P defaults to /usr/local, D to nothing):
  bin/s2s                                the binary S2S
  share/man/man1/*.1                     the pages in DIR (scripts/gen-man.sh), with
                                         @DOCDIR@ replaced by P/share/doc/s2s
  share/bash-completion/completions/s2s  FILE (scripts/gen-completion.sh)
  share/doc/s2s/                         README.md and docs/ of the source tree, and
                                         MANIFEST: the files installed, a path a line
uninstall removes the files that D/P/share/doc/s2s/MANIFEST lists, then that directory.
Directories that other software shares (bin/, share/man/man1/, ...) are left in place.
D is prepended to every path written and never recorded: it is for staging a tree that
is later copied to / (a package).
USAGE
}

bad_usage() {
    echo "install.sh: $* (see scripts/install.sh --help)" >&2
    exit 2
}

die() {
    echo "install.sh: $*" >&2
    exit 1
}

action=
prefix=/usr/local
destdir=
bin=
man=
completion=
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help)
        usage
        exit 0
        ;;
    install | uninstall) action=$1 ;;
    --prefix | --destdir | --bin | --man | --completion)
        [ $# -ge 2 ] || bad_usage "option $1 needs a value"
        case "$1" in
        --prefix) prefix=$2 ;;
        --destdir) destdir=$2 ;;
        --bin) bin=$2 ;;
        --man) man=$2 ;;
        --completion) completion=$2 ;;
        esac
        shift
        ;;
    *) bad_usage "unexpected argument '$1'" ;;
    esac
    shift
done
[ -n "$action" ] || bad_usage "expected install or uninstall"
case "$prefix" in
/*) ;;
*) bad_usage "--prefix must be an absolute path, got '$prefix'" ;;
esac
prefix=${prefix%/}
docdir=$prefix/share/doc/s2s
manifest=$destdir$docdir/MANIFEST
here=$(cd "$(dirname "$0")/.." && pwd)

if [ "$action" = uninstall ]; then
    if [ ! -f "$manifest" ]; then
        echo "install.sh: nothing to uninstall: no $manifest" >&2
        exit 0
    fi
    while IFS= read -r f; do
        case "$f" in
        "$prefix"/*) rm -f "$destdir$f" ;;
        *) die "$manifest lists $f, which is not under $prefix" ;;
        esac
    done <"$manifest"
    rm -rf "$destdir$docdir"
    echo "removed s2s from $destdir$prefix"
    exit 0
fi

if [ -z "$bin" ] || [ -z "$man" ] || [ -z "$completion" ]; then
    bad_usage "install needs --bin, --man and --completion"
fi
[ -x "$bin" ] || die "no executable $bin"
[ -f "$man/s2s.1" ] || die "no manual pages in $man (scripts/gen-man.sh)"
[ -f "$completion" ] || die "no completion script $completion (scripts/gen-completion.sh)"

installed=()
# put SRC DEST MODE: DEST (a path under the prefix) from SRC
put() {
    install -d "$(dirname "$destdir$2")"
    install -m "$3" "$1" "$destdir$2"
    installed+=("$2")
}

put "$bin" "$prefix/bin/s2s" 755
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the documentation's directory in the pages; escaped for sed's replacement
docdir_sed=$(printf '%s' "$docdir" | sed 's/[\\|&]/\\&/g')
for page in "$man"/s2s.1 "$man"/s2s-*.1; do
    [ -f "$page" ] || continue
    sed "s|@DOCDIR@|$docdir_sed|g" "$page" >"$tmp/page"
    put "$tmp/page" "$prefix/share/man/man1/$(basename "$page")" 644
done
put "$completion" "$prefix/share/bash-completion/completions/s2s" 644
put "$here/README.md" "$docdir/README.md" 644
while IFS= read -r f; do
    put "$here/$f" "$docdir/$f" 644
done < <(cd "$here" && find docs -type f | LC_ALL=C sort)
printf '%s\n' "${installed[@]}" "$docdir/MANIFEST" >"$tmp/MANIFEST"
install -m 644 "$tmp/MANIFEST" "$manifest"
echo "installed s2s in $destdir$prefix: ${#installed[@]} files"
