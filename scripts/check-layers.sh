#!/bin/sh
# Checks that every file under src/ includes headers of its own module or of earlier
# layers only. The layers, in order (modules of one layer may not include each other):
#   base → text, nn, eval → model → data → decode → api → train, serve → commands (src/*.c)
# Prints each offending include as FILE:LINE and exits 1 when there is any.
set -eu
cd "$(dirname "$0")/.."
LAYERS="base text,nn,eval model data decode api train,serve"

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
