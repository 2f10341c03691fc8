#!/bin/sh
# Regenerates the main-window screenshots under Xvfb (a real X server, real window):
#   docs/screenshots/make-screenshots.sh [BUILD_DIR]
# BUILD_DIR defaults to build/gui; the `headroom` target must be built there.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/gui}
app=$build/app/gui/headroom
[ -x "$app" ] || { echo "make-screenshots: $app not found; build the 'headroom' target first" >&2; exit 1; }
# A throwaway settings directory: the screenshots show the defaults, not the user's last session.
export XDG_CONFIG_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT
shoot() { # model output [app options]
    model=$1 out=$2; shift 2
    xvfb-run -a -s "-screen 0 1600x1000x24" "$app" --lang en "$@" --screenshot "$root/docs/screenshots/$out" "$root/$model"
    echo "wrote docs/screenshots/$out"
}
shoot tests/data/resnet50.onnx main-resnet50.png --batch 64 --tab layers
shoot tests/data/tiny_gpt.onnx main-tiny_gpt.png --batch 32 --tab breakdown
shoot tests/data/tiny_gpt.onnx timeline-tiny_gpt.png --batch 32 --tab timeline
shoot tests/data/resnet50.onnx scaling-resnet50.png --batch 64 --tab scaling
