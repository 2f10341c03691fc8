#!/bin/sh
# Regenerates the main-window screenshots from a real window: Xvfb, a window manager (openbox) and an X
# grab of the screen (ImageMagick's `import`), not the app's own rendering:
#   docs/screenshots/make-screenshots.sh [BUILD_DIR]
# BUILD_DIR defaults to build/release; the `headroom` and `write_vit_fixture` targets must be built there.
# Needs xvfb, openbox and imagemagick (not build dependencies: apt-get install openbox imagemagick).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
app=$build/app/gui/headroom
[ -x "$app" ] || { echo "make-screenshots: $app not found; build the 'headroom' target first" >&2; exit 1; }
for tool in Xvfb openbox import; do
    command -v $tool >/dev/null || { echo "make-screenshots: $tool missing (apt-get install xvfb openbox imagemagick)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tests/write_vit_fixture" "$work/vit_b_16.onnx"

shoot() { # screen scale model output [app options]
    screen=$1 scale=$2 model=$3 out=$4; shift 4
    # A throwaway settings directory per shot: first start, default geometry (80 % of the screen).
    export XDG_CONFIG_HOME="$work/config-$out"
    display=:$((90 + $(date +%S) % 9))
    Xvfb "$display" -screen 0 "${screen}x24" -nolisten tcp >/dev/null 2>&1 &
    xvfb=$!
    sleep 1
    DISPLAY=$display openbox >/dev/null 2>&1 &
    wm=$!
    sleep 1
    DISPLAY=$display QT_SCALE_FACTOR=$scale QT_QPA_PLATFORM=xcb "$app" --lang en "$@" "$model" >/dev/null 2>&1 &
    pid=$!
    sleep "${HEADROOM_SHOT_WAIT:-12}" # load, analyse, draw
    DISPLAY=$display import -window root "$root/docs/screenshots/$out"
    kill "$pid" "$wm" "$xvfb" 2>/dev/null || true
    wait "$pid" "$wm" "$xvfb" 2>/dev/null || true
    echo "wrote docs/screenshots/$out"
}
shoot 1600x1000 1 "$work/vit_b_16.onnx" main-vit_b_16.png --batch 64 --tab layers
shoot 1600x1000 1 "$root/tests/data/resnet50.onnx" main-resnet50.png --batch 64 --tab layers
shoot 1600x1000 1 "$root/tests/data/tiny_gpt.onnx" main-tiny_gpt.png --batch 32 --tab breakdown
shoot 1600x1000 1 "$root/tests/data/tiny_gpt.onnx" timeline-tiny_gpt.png --batch 32 --tab timeline
shoot 1600x1000 1 "$root/tests/data/resnet50.onnx" scaling-resnet50.png --batch 64 --tab scaling
shoot 2560x1600 2 "$work/vit_b_16.onnx" main-vit_b_16-200pct.png --batch 64 --tab layers
