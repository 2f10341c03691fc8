#!/bin/sh
# Regenerates the Breakdown and advice screenshots of issue 25's acceptance case: Llama-3.1-8B's config.json,
# LoRA r16 on q_proj,v_proj, pure bf16, AdamW, seq 2048, batch 1, on an RTX 4090. The app grabs its own
# window offscreen (headroom --screenshot, QT_QPA_PLATFORM=offscreen), so no X server is needed:
#   docs/screenshots/make-advice-screenshots.sh [BUILD_DIR]
# BUILD_DIR defaults to build/release; the `headroom` and `headroom-cli` targets must be built there.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
app=$build/app/gui/headroom
[ -x "$app" ] || { echo "make-advice-screenshots: $app not found; build the 'headroom' target first" >&2; exit 1; }
model=$root/resources/samples/Llama-3.1-8B.json
# The key the app files a model's settings under (ControlsPanel::modelKey: the model's SHA-256 as the report
# gives it; for a config.json, the graph built from it).
key=$("$build/app/cli/headroom-cli" "$model" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["model"]["sha256"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shoot() { # output tab [settings lines]
    out=$1 tab=$2; shift 2
    # A throwaway settings directory per shot, holding the configuration as if the user had set it on this
    # model (the settings belong to the model they were set on).
    export XDG_CONFIG_HOME="$work/config-$out"
    mkdir -p "$XDG_CONFIG_HOME/Headroom"
    {
        echo "[config]"
        echo "mode=train"
        echo "dtype=bf16"
        echo "optimizer=adamw"
        echo "gpu=GeForce RTX 4090 24 GB"
        echo "modelKey=$key"
        echo "[finetune]"
        echo "method=1"
        echo "rank=16"
        echo "alpha=32"
        echo "targets=q_proj,v_proj"
        for line in "$@"; do echo "$line"; done
        echo "[symbols]"
        echo "seq=2048"
        echo "batch=1"
    } > "$XDG_CONFIG_HOME/Headroom/Headroom.conf"
    QT_QPA_PLATFORM=offscreen "$app" --lang en --tab "$tab" --screenshot "$root/docs/screenshots/$out" "$model"
    echo "wrote docs/screenshots/$out"
}
shoot breakdown-llama-lora.png breakdown "layerCheckpoint=false"
shoot layers-llama-lora.png layers "layerCheckpoint=false"
