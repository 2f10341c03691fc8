#!/usr/bin/env bash
# cpack -G DEB yields a package with the binaries, the desktop entry, the MIME type and the metainfo.
# ctest passes the CLI path and tests/data; the build directory is the one that holds the CLI.
set -euo pipefail
cli=$1
build=$(cd "$(dirname "$cli")/../.." && pwd)
[ -f "$build/CPackConfig.cmake" ] || { echo "no CPackConfig.cmake in $build"; exit 1; }
command -v dpkg-deb >/dev/null || { echo "dpkg-deb missing (install-deps.sh installs dpkg-dev)"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# gzip (CPack's default for DEB) keeps this fast.
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip \
  >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log"; exit 1; }
deb=$(ls "$out"/*.deb 2>/dev/null | head -n1 || true)
[ -n "$deb" ] || { echo "cpack made no .deb"; cat "$out/cpack.log"; exit 1; }
listing=$(dpkg-deb -c "$deb")
fail=0
expect() {
  if grep -qE "$1" <<<"$listing"; then echo "ok   $1"; else echo "MISSING $1"; fail=1; fi
}
expect '\./usr/bin/headroom-cli$'
if [ -f "$build/app/gui/headroom" ]; then
  expect '\./usr/bin/headroom$'
  expect '\./usr/share/applications/headroom\.desktop$'
  expect '\./usr/share/icons/hicolor/scalable/apps/headroom\.svg$'
  expect '\./usr/share/metainfo/io\.github\.headroom\.metainfo\.xml$'
  expect '\./usr/share/doc/headroom/USER_GUIDE\.md$' # F1 opens it
  expect '\./usr/share/doc/headroom/copyright$' # the licence, where Debian keeps it
fi
if [ -f "$build/app/probe/headroom-probe" ]; then
  expect '\./usr/bin/headroom-probe$'
fi
expect '\./usr/share/mime/packages/headroom-onnx\.xml$'
expect '\./usr/share/headroom/samples/.*\.onnx$'
info=$(dpkg-deb -f "$deb" Package Version Depends)
echo "$info"
grep -q '^Package: headroom' <<<"$info" || { echo "wrong package name"; fail=1; }
grep -q '^Depends: .' <<<"$info" || { echo "no dependencies declared"; fail=1; }
# The MIME type claims *.onnx for application/x-onnx and the desktop entry opens that type.
dpkg-deb -x "$deb" "$out/root"
grep -q 'pattern="\*\.onnx"' "$out/root/usr/share/mime/packages/headroom-onnx.xml" || { echo "no *.onnx glob"; fail=1; }
if [ -f "$out/root/usr/share/applications/headroom.desktop" ]; then
  grep -q '^MimeType=.*application/x-onnx' "$out/root/usr/share/applications/headroom.desktop" || {
    echo "desktop entry does not open application/x-onnx"; fail=1; }
fi
exit $fail
