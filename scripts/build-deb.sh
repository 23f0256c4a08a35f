#!/usr/bin/env bash
# Builds the Debian packages of debian/control (`make deb` runs it): the source tree as it
# is on disk (the files git tracks or would track, without build outputs or ignored data)
# is copied to OUTDIR/s2s-VERSION/, dpkg-buildpackage builds the binary packages there
# (debian/rules: make install into debian/tmp), and the packages, .buildinfo and .changes
# land in OUTDIR. lintian then checks them when it is installed: an error fails the build.
set -euo pipefail

die() {
    echo "build-deb.sh: $*" >&2
    exit 1
}

[ $# -eq 1 ] || die "usage: scripts/build-deb.sh OUTDIR"
out=$1
cd "$(dirname "$0")/.."
for tool in dpkg-buildpackage dh dpkg-parsechangelog; do
    command -v "$tool" >/dev/null ||
        die "no $tool: sudo apt-get install -y debhelper dpkg-dev (and lintian to check the packages)"
done
version=$(sed -n 's/^#define S2S_VERSION_STRING "\(.*\)"/\1/p' include/s2s.h)
deb_version=$(dpkg-parsechangelog -S Version)
[ "${deb_version%%-*}" = "$version" ] ||
    die "debian/changelog is at $deb_version, include/s2s.h at $version: add a changelog entry (dch -v $version)"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || die "not a git checkout: the files to package are the ones git lists"

rm -rf "$out"
src=$out/s2s-$version
mkdir -p "$src"
# Tracked and untracked files, not the ignored ones; files deleted on disk are skipped.
git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do
        if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
    done |
    tar -cf - --null --no-recursion -T - | tar -xf - -C "$src"

(cd "$src" && dpkg-buildpackage -b -us -uc -jauto)
rm -rf "$src"
ls -l "$out"/*.deb
if command -v lintian >/dev/null; then
    echo "lintian:"
    lintian --fail-on error "$out"/*.changes
else
    echo "build-deb.sh: lintian is not installed: the packages were not checked (apt-get install lintian)" >&2
fi
