#!/usr/bin/env bash
# Installs the English–French corpus (Tatoeba pairs packaged by manythings.org) as
# data/fra.txt, with the packager's notes in data/_about.txt.
#
#   scripts/get-data.sh                 download fra-eng.zip from manythings.org
#   scripts/get-data.sh fra-eng.zip     unpack a zip downloaded by hand
#   scripts/get-data.sh fra.txt         copy an already unpacked fra.txt
#
# S2S_DATA_URL overrides the download address (a mirror).
# data/fra.txt is replaced only once the new file has been checked (written to a
# temporary file in data/, then renamed), so a failed run leaves it as it was.
set -euo pipefail

URL="${S2S_DATA_URL:-https://www.manythings.org/anki/fra-eng.zip}"
# manythings.org refuses some non-browser clients; present a common browser.
USER_AGENT="Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
PROG="get-data.sh"

die() {
    printf '%s: %s\n' "$PROG" "$*" >&2
    exit 1
}

usage() {
    cat <<EOF
usage: scripts/get-data.sh [PATH_TO_fra.txt_OR_fra-eng.zip]
Without an argument, downloads $URL
and unpacks fra.txt into data/. With a .zip, unpacks it; with a text file, copies it.
EOF
}

case "${1-}" in
    -h | --help)
        usage
        exit 0
        ;;
    -*)
        printf '%s: unknown option %s (see --help)\n' "$PROG" "$1" >&2
        exit 2
        ;;
esac
if [ "$#" -gt 1 ]; then
    printf '%s: expected at most one argument, got %d (see --help)\n' "$PROG" "$#" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
datadir="$root/data"
mkdir -p "$datadir" || die "cannot create $datadir"
tmp="$(mktemp -d "$datadir/.get-data.XXXXXX")" || die "cannot create a temporary directory in $datadir"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

have() { command -v "$1" >/dev/null 2>&1; }

# download URL OUT: fetches with curl or wget, dies with the reason on failure.
download() {
    local url="$1" out="$2" msg rc
    if have curl; then
        rc=0
        msg="$(curl --fail --silent --show-error --location --connect-timeout 15 \
            --max-time 900 --user-agent "$USER_AGENT" --output "$out" "$url" 2>&1)" || rc=$?
        if [ "$rc" -ne 0 ]; then
            msg="${msg//$'\n'/ }"
            die "download of $url failed (${msg:-curl exit $rc}); fetch it in a browser and run: scripts/get-data.sh PATH/TO/fra-eng.zip"
        fi
    elif have wget; then
        rc=0
        wget --quiet --connect-timeout=15 --read-timeout=60 --tries=1 \
            --user-agent="$USER_AGENT" --output-document="$out" "$url" || rc=$?
        if [ "$rc" -ne 0 ]; then
            case "$rc" in
                4) msg="network failure" ;;
                5) msg="TLS failure" ;;
                8) msg="the server answered with an error, e.g. 403 or 404" ;;
                *) msg="wget exit $rc" ;;
            esac
            die "download of $url failed ($msg); fetch it in a browser and run: scripts/get-data.sh PATH/TO/fra-eng.zip"
        fi
    else
        die "neither curl nor wget is installed; install one, or fetch $URL in a browser and run: scripts/get-data.sh PATH/TO/fra-eng.zip"
    fi
    [ -s "$out" ] || die "download of $url produced an empty file"
}

# zip_members ZIP: one member name a line; fails if ZIP is not a readable zip.
zip_members() {
    if have unzip; then
        unzip -Z1 "$1" 2>/dev/null
    else
        python3 -c 'import sys, zipfile
for n in zipfile.ZipFile(sys.argv[1]).namelist(): print(n)' "$1" 2>/dev/null
    fi
}

# zip_extract ZIP MEMBER OUT
zip_extract() {
    if have unzip; then
        unzip -p "$1" "$2" >"$3" 2>/dev/null
    else
        python3 -c 'import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$1" "$2" "$3" 2>/dev/null
    fi
}

is_zip_magic() {
    [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = "504b0304" ]
}

# unpack_zip ZIP LABEL [HINT]: fra.txt (and _about.txt when present) into $tmp.
unpack_zip() {
    local zip="$1" label="$2" members fra about
    have unzip || have python3 || die "cannot read zip archives: neither unzip nor python3 is installed"
    is_zip_magic "$zip" || die "$label is not a zip archive${3-}"
    members="$(zip_members "$zip")" || die "$label: cannot list the zip archive (damaged or truncated?)"
    fra="$(printf '%s\n' "$members" | grep -E '(^|/)fra\.txt$' | head -n 1)" || true
    [ -n "$fra" ] || die "$label does not contain fra.txt"
    zip_extract "$zip" "$fra" "$tmp/fra.txt" || die "$label: cannot extract $fra (damaged archive?)"
    about="$(printf '%s\n' "$members" | grep -E '(^|/)_about\.txt$' | head -n 1)" || true
    if [ -n "$about" ]; then
        zip_extract "$zip" "$about" "$tmp/_about.txt" || die "$label: cannot extract $about (damaged archive?)"
    fi
}

if [ "$#" -eq 0 ]; then
    echo "$PROG: downloading $URL"
    download "$URL" "$tmp/fra-eng.zip"
    unpack_zip "$tmp/fra-eng.zip" "the file downloaded from $URL" \
        " (the site may have answered with a web page); fetch it in a browser and run: scripts/get-data.sh PATH/TO/fra-eng.zip"
    src="$URL"
else
    src="$1"
    [ -e "$src" ] || die "$src: no such file"
    [ -f "$src" ] || die "$src: not a regular file"
    [ -r "$src" ] || die "$src: not readable"
    case "$src" in
        *.zip | *.ZIP) unpack_zip "$src" "$src" ;;
        *)
            if is_zip_magic "$src"; then
                unpack_zip "$src" "$src"
            else
                cp -- "$src" "$tmp/fra.txt" || die "$src: cannot copy to $datadir"
                about="$(dirname -- "$src")/_about.txt"
                if [ -f "$about" ]; then
                    cp -- "$about" "$tmp/_about.txt" || die "$about: cannot copy to $datadir"
                fi
            fi
            ;;
    esac
fi

# Check the corpus before it replaces data/fra.txt.
out="$tmp/fra.txt"
[ -s "$out" ] || die "fra.txt from $src is empty"
if have iconv; then
    iconv -f UTF-8 -t UTF-8 "$out" >/dev/null 2>&1 || die "fra.txt from $src is not valid UTF-8"
fi
read -r pairs bad first_bad < <(awk -F'\t' '
    NF < 2 { bad++; if (!first) first = NR }
    END { print NR, bad + 0, first + 0 }' "$out")
if [ "$bad" -ne 0 ]; then
    die "fra.txt from $src: $bad of $pairs lines have fewer than two tab-separated columns (first: line $first_bad)"
fi

chmod 644 "$tmp"/*.txt || die "cannot set the permissions of the files in $tmp"
if [ -f "$tmp/_about.txt" ]; then
    mv -f -- "$tmp/_about.txt" "$datadir/_about.txt" || die "cannot write $datadir/_about.txt"
fi
mv -f -- "$out" "$datadir/fra.txt" || die "cannot write $datadir/fra.txt"
echo "$PROG: $pairs pairs in $datadir/fra.txt"
