#!/usr/bin/env bash
# Installs s2s (binary, manual pages, bash completion, documentation) under a prefix,
# or removes what it installed there: `make install` and `make uninstall` run it.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/install.sh install [--prefix P] [--destdir D] --bin S2S --man DIR --completion FILE
                                  [--lib LIBDIR --header H [--libdir L]]
                                  [--python PKG [--pythondir PY]]
       scripts/install.sh uninstall [--prefix P] [--destdir D]

install copies, under D/P (P defaults to /usr/local, D to nothing):
  bin/s2s                                the binary S2S
  share/man/man1/*.1                     the pages in DIR (scripts/gen-man.sh), with
                                         @DOCDIR@ replaced by P/share/doc/s2s
  share/bash-completion/completions/s2s  FILE (scripts/gen-completion.sh)
  share/doc/s2s/                         README.md, LICENSE and docs/ of the source tree, and
                                         MANIFEST: the files installed, a path a line
and with --lib, from LIBDIR (make lib), into L (default P/lib):
  libs2s.so.X.Y.Z, libs2s.so.X, libs2s.so  the shared library and its two links
  libs2s.a                               the static library
  pkgconfig/s2s.pc                       LIBDIR/s2s.pc.in with @PREFIX@ and @LIBDIR@
                                         replaced by P and L
  P/include/s2s.h                        the header H
with --python, into PY (default P/lib/python3/dist-packages):
  s2s/                                   the Python package PKG (its *.py and py.typed),
                                         with @LIBDIR@ in __init__.py replaced by L
uninstall removes the files that D/P/share/doc/s2s/MANIFEST lists, then that directory
(and the Python package's directory with its __pycache__).
Directories that other software shares (bin/, share/man/man1/, ...) are left in place.
D is prepended to every path written and never recorded: it is for staging a tree that
is later copied to / (a package). Installing the library without D as root runs
ldconfig, so that programs find it at once.
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
lib=
header=
libdir=
python=
pythondir=
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help)
        usage
        exit 0
        ;;
    install | uninstall) action=$1 ;;
    --prefix | --destdir | --bin | --man | --completion | --lib | --header | --libdir | --python | --pythondir)
        [ $# -ge 2 ] || bad_usage "option $1 needs a value"
        case "$1" in
        --prefix) prefix=$2 ;;
        --destdir) destdir=$2 ;;
        --bin) bin=$2 ;;
        --man) man=$2 ;;
        --completion) completion=$2 ;;
        --lib) lib=$2 ;;
        --header) header=$2 ;;
        --libdir) libdir=$2 ;;
        --python) python=$2 ;;
        --pythondir) pythondir=$2 ;;
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
libdir=${libdir:-$prefix/lib}
pythondir=${pythondir:-$prefix/lib/python3/dist-packages}
for d in "$libdir" "$pythondir"; do
    case "$d" in
    /*) ;;
    *) bad_usage "--libdir and --pythondir must be absolute paths, got '$d'" ;;
    esac
done
libdir=${libdir%/}
pythondir=${pythondir%/}
docdir=$prefix/share/doc/s2s
manifest=$destdir$docdir/MANIFEST
here=$(cd "$(dirname "$0")/.." && pwd)

if [ "$action" = uninstall ]; then
    pkgdirs=()
    if [ ! -f "$manifest" ]; then
        echo "install.sh: nothing to uninstall: no $manifest" >&2
        exit 0
    fi
    while IFS= read -r f; do
        case "$f" in
        "$prefix"/*) rm -f "$destdir$f" ;;
        *) die "$manifest lists $f, which is not under $prefix" ;;
        esac
        case "$f" in
        */s2s/__init__.py) pkgdirs+=("$destdir${f%/__init__.py}") ;;
        esac
    done <"$manifest"
    # the Python package's directory, and the bytecode Python wrote there on import
    for d in "${pkgdirs[@]}"; do
        rm -rf "$d/__pycache__"
        rmdir "$d" 2>/dev/null || true
    done
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
if [ -n "$lib" ]; then
    [ -n "$header" ] || bad_usage "--lib needs --header"
    [ -f "$header" ] || die "no header $header"
    [ -f "$lib/libs2s.a" ] && [ -f "$lib/s2s.pc.in" ] || die "no library in $lib (make lib)"
fi
[ -z "$python" ] || [ -f "$python/__init__.py" ] || die "no Python package in $python"

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
# link TARGET PATH: a symbolic link PATH (under the prefix) to TARGET
link() {
    install -d "$(dirname "$destdir$2")"
    ln -sfn "$1" "$destdir$2"
    installed+=("$2")
}
# replaced SRC: SRC with @PREFIX@ and @LIBDIR@ filled in, as a file in $tmp
replaced() {
    sed "s|@PREFIX@|$(printf '%s' "$prefix" | sed 's/[\\|&]/\\&/g')|g; s|@LIBDIR@|$(printf '%s' "$libdir" | sed 's/[\\|&]/\\&/g')|g" "$1" >"$tmp/replaced"
    echo "$tmp/replaced"
}
if [ -n "$lib" ]; then
    shared=$(cd "$lib" && ls libs2s.so.*.*.* 2>/dev/null | head -n 1)
    [ -n "$shared" ] || die "no libs2s.so.X.Y.Z in $lib (make lib)"
    [ "$(cd "$lib" && ls libs2s.so.*.*.* | wc -l)" -eq 1 ] || die "several libs2s.so.X.Y.Z in $lib (make lib again)"
    soname=${shared%.*.*}
    put "$lib/$shared" "$libdir/$shared" 755
    link "$shared" "$libdir/$soname"
    link "$soname" "$libdir/libs2s.so"
    put "$lib/libs2s.a" "$libdir/libs2s.a" 644
    put "$(replaced "$lib/s2s.pc.in")" "$libdir/pkgconfig/s2s.pc" 644
    put "$header" "$prefix/include/s2s.h" 644
fi
if [ -n "$python" ]; then
    for f in "$python"/*.py "$python"/py.typed; do
        [ -f "$f" ] || continue
        src=$f
        [ "$(basename "$f")" = __init__.py ] && src=$(replaced "$f")
        put "$src" "$pythondir/s2s/$(basename "$f")" 644
    done
fi
put "$here/README.md" "$docdir/README.md" 644
put "$here/LICENSE" "$docdir/LICENSE" 644
while IFS= read -r f; do
    put "$here/$f" "$docdir/$f" 644
done < <(cd "$here" && find docs -type f | LC_ALL=C sort)
printf '%s\n' "${installed[@]}" "$docdir/MANIFEST" >"$tmp/MANIFEST"
install -m 644 "$tmp/MANIFEST" "$manifest"
echo "installed s2s in $destdir$prefix: ${#installed[@]} files"
if [ -n "$lib" ] && [ -z "$destdir" ] && [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then
    ldconfig
fi
