#!/usr/bin/env bash
# headroom-cli --pdf writes the report headless (offscreen Qt): the model name, the peak exactly as the JSON
# has it, the number of layers, at least 4 pages; --lang zh_CN gives Chinese text (not boxes: pdftotext
# reads the characters back only when the font has them and the PDF maps them to Unicode).
set -u
cli=$1; data=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for tool in pdftotext pdfinfo python3; do
  command -v $tool >/dev/null || { echo "$tool missing (install-deps.sh installs poppler-utils)"; exit 1; }
done
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
# Without a runtime directory Qt warns on stderr, which would mask the one-line error checked below.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR=$tmp/run; mkdir -m 700 "$XDG_RUNTIME_DIR"
fi
fail=0; passed=0
check() { # name, condition...
  local name=$1; shift
  if "$@"; then passed=$((passed+1)); else echo "FAIL: $name"; fail=$((fail+1)); fi
}
json_field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
pages() { pdfinfo "$1" | awk '/^Pages:/ {print $2}'; }

for model in resnet50 tiny_gpt; do
  pdf=$tmp/$model.pdf
  check "$model: --pdf exits 0" "$cli" "$data/$model.onnx" --pdf "$pdf"
  [ -s "$pdf" ] || { echo "FAIL: $model: no PDF written"; fail=$((fail+1)); continue; }
  "$cli" "$data/$model.onnx" --json >"$tmp/$model.json"
  peak=$(json_field "$tmp/$model.json" "j['memory']['peak']")
  layers=$(json_field "$tmp/$model.json" "len(j['layers'])")
  pdftotext -layout "$pdf" "$tmp/$model.txt"
  check "$model: names the model" grep -q "$model.onnx" "$tmp/$model.txt"
  check "$model: peak $peak bytes as in the JSON" grep -q "Peak allocated: .*($peak bytes)" "$tmp/$model.txt"
  check "$model: the layer tree, not every node" grep -q "Layer table ([0-9]* rows)" "$tmp/$model.txt"
  check "$model: says whether the fit is known" grep -q "Fit known" "$tmp/$model.txt"
  check "$model: at least 4 pages" test "$(pages "$pdf")" -ge 4
  # The per-node table only on request.
  check "$model: --pdf-all-nodes exits 0" "$cli" "$data/$model.onnx" --pdf "$tmp/$model.all.pdf" --pdf-all-nodes
  pdftotext -layout "$tmp/$model.all.pdf" "$tmp/$model.all.txt"
  check "$model: --pdf-all-nodes lists $layers layers" grep -q "Layer table ($layers layers)" "$tmp/$model.all.txt"
done

# Quiet: writing a file says one line, not the table.
out=$("$cli" "$data/tiny_gpt.onnx" --pdf "$tmp/q.pdf")
check "--pdf prints one line" test "$(printf '%s\n' "$out" | wc -l)" -eq 1
check "--pdf names the file" grep -q "q.pdf" <<<"$out"

# Every shipped sample and the ViT-B/16-sized transformer (written by tst_layertree's fixture when present)
# fit a readable report: at most 15 pages at batch 256.
samples=$(dirname "$data")/../resources/samples
vit=$tmp/vit_b_16.onnx
helper=$(dirname "$cli")/../../tests/write_vit_fixture
[ -x "$helper" ] && "$helper" "$vit"
check "the ViT-B/16 fixture is written" test -s "$vit"
for onnx in "$samples"/*.onnx "$vit"; do
  [ -f "$onnx" ] || continue
  name=$(basename "$onnx" .onnx)
  args=(--pdf "$tmp/$name.pdf")
  "$cli" "$onnx" --batch 256 "${args[@]}" >/dev/null 2>&1 || "$cli" "$onnx" "${args[@]}" >/dev/null
  check "$name: report written" test -s "$tmp/$name.pdf"
  check "$name: at most 15 pages ($(pages "$tmp/$name.pdf"))" test "$(pages "$tmp/$name.pdf")" -le 15
done

# Chinese: the translated report, with CJK glyphs that pdftotext can read back.
check "zh_CN: --lang zh_CN --pdf exits 0" "$cli" "$data/tiny_gpt.onnx" --lang zh_CN --pdf "$tmp/zh.pdf"
pdftotext "$tmp/zh.pdf" "$tmp/zh.txt" 2>/dev/null
check "zh_CN: Chinese text" python3 -c "
import sys; t=open(sys.argv[1], encoding='utf-8').read()
sys.exit(0 if sum('\u4e00' <= c <= '\u9fff' for c in t) > 50 else 1)" "$tmp/zh.txt"
check "zh_CN: the report title" grep -q "GPU 显存报告" "$tmp/zh.txt"

# --vary seq (padded batches): the configuration names it and the assumptions say which length reserves the most,
# as the JSON's memory.reserved_peak_at has it; without the flag neither line is there.
l32="$data/external/meta-llama--Llama-3.2-3B.json"
vrun=(--batch 4 --set seq=768 --dtype bf16 --optimizer adamw)
check "vary: --pdf exits 0" "$cli" "$l32" "${vrun[@]}" --vary seq --pdf "$tmp/vary.pdf"
"$cli" "$l32" "${vrun[@]}" --vary seq --json >"$tmp/vary.json"
at=$(json_field "$tmp/vary.json" "j['memory']['reserved_peak_at']")
pdftotext -layout "$tmp/vary.pdf" - 2>/dev/null | tr -s ' \n' ' ' >"$tmp/vary.txt"
check "vary: configuration row" grep -q "Padded batches seq varies from step to step up to 768" "$tmp/vary.txt"
check "vary: the length that reserves the most ($at)" grep -q "with seq up to 768, each replayed on its own: $at reaches it" "$tmp/vary.txt"
check "fixed: --pdf exits 0" "$cli" "$l32" "${vrun[@]}" --pdf "$tmp/fixed.pdf"
check "fixed: no padded-batches lines" bash -c "! pdftotext '$tmp/fixed.pdf' - 2>/dev/null | grep -q 'Padded batches'"

# A failed write leaves nothing behind and says why in one line naming the file.
"$cli" "$data/tiny_gpt.onnx" --pdf "$tmp/no/such/dir/r.pdf" 2>"$tmp/err"; rc=$?
check "unwritable: exit 1" test "$rc" -eq 1
check "unwritable: one line naming the file" test "$(wc -l <"$tmp/err")" -eq 1 -a -n "$(grep r.pdf "$tmp/err")"
check "unwritable: no partial file" test ! -e "$tmp/no/such/dir/r.pdf"

echo "$passed passed, $fail failed"
exit $((fail > 0))
