#!/bin/sh
# Checks that every file under src/ includes headers of its own module or of earlier
# layers only. The layers, in order (modules of one layer may not include each other):
#   base → text, nn, eval → model → data → decode → api → train, serve → commands (src/*.c)
# Prints each offending include as FILE:LINE and exits 1 when there is any.
#
# Second, the library's users: the server (src/serve/) and every command (src/*.[ch])
# but those of MODULE_USERS reach the engine through its public header alone. Each of
# their files, and each header of the commands it includes, directly or through
# another, may include base/ (buffers, JSON, options, files, errors: no model, text or
# decoding), include/s2s.h, the other library users' headers (checked too) and such
# headers of the commands, nothing else. On success it says which files that holds for.
set -eu
cd "$(dirname "$0")/.."
LAYERS="base text,nn,eval model data decode api train,serve"
# The files that call the modules below the header: the program's start (main.c: the
# BLAS threads, for every command) and the trainer's commands, for which the header
# has no functions (preparing, training, averaging models and training states).
MODULE_USERS="src/main.c src/cmd_opts.c src/cmd_prepare.c src/cmd_train.c src/cmd_average.c"

for d in src/*/; do
    m=$(basename "$d")
    case ",$(echo $LAYERS | tr ' ' ','),"  in *",$m,"*) ;; *)
        echo "check-layers: src/$m is in no layer (add it to LAYERS in $0)"; exit 1 ;; esac
done

rank() { # the layer of a module; the commands come after every layer
    r=0
    for layer in $LAYERS; do
        case ",$layer," in *",$1,"*) echo $r; return ;; esac
        r=$((r + 1))
    done
    echo $r
}

find src -name '*.[ch]' | sort | while IFS= read -r f; do
    mod=$(dirname "$f")
    mod=${mod#src}
    mod=${mod#/}
    [ -n "$mod" ] || mod=commands
    own=$(rank "$mod")
    grep -n '^#include "[a-z_]*/' "$f" | while IFS= read -r line; do
        dep=$(echo "$line" | sed 's/^[0-9]*:#include "\([a-z_]*\)\/.*/\1/')
        [ "$dep" = "$mod" ] && continue
        if [ "$(rank "$dep")" -ge "$own" ]; then
            echo "$f:${line%%:*}: $mod includes $dep/, which is not in an earlier layer"
        fi
    done
done | { if read -r first; then echo "$first"; cat; exit 1; fi; }

# The project headers that FILE includes, resolved to paths, one a line.
includes() {
    sed -n 's/^#include "\([a-z_0-9/.]*\)".*/\1/p' "$1" | while IFS= read -r h; do
        case $h in
            s2s.h) echo include/s2s.h ;;
            *) echo "src/$h" ;;
        esac
    done
}

# FILE's includes, and those of each commands header it reaches, outside what a
# library user may include; VIA: the header it came through.
outside() { # FILE VIA
    includes "$1" | while IFS= read -r h; do
        case " $users " in *" $h "*) continue ;; esac
        case $h in
            include/s2s.h | src/base/*) ;;
            src/*/*) echo "$h$2" ;;
            src/*.h) outside "$h" " (through $h)" ;;
            *) echo "$h$2" ;;
        esac
    done
}

users=$( { find src/serve -name '*.[ch]'; find src -maxdepth 1 -name '*.[ch]'; } | sort | while IFS= read -r f; do
    case " $MODULE_USERS " in *" $f "*) ;; *) echo "$f" ;; esac
done | tr '\n' ' ')
for f in $users; do
    outside "$f" "" | sort -u | sed "s|^|$f: includes |; s|\$| (the library's users include base/ and include/s2s.h only)|"
done | { if read -r first; then echo "$first"; cat; exit 1; fi; }
echo "check-layers: the layers hold; through include/s2s.h alone: src/serve/ and every command but $MODULE_USERS ($(echo $users | wc -w) files)"

