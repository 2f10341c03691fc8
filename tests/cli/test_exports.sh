#!/usr/bin/env bash
# Today's exports end to end: no verdict while sizes are unknown (text, JSON, PDF), the Hugging Face dynamo
# exports read with module names in every output, and --max SYMBOL.
set -u
cli=$1; data=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "python3 missing"; exit 1; }
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR=$tmp/run; mkdir -m 700 "$XDG_RUNTIME_DIR"
fi
fail=0; passed=0
check() { # name, condition...
  local name=$1; shift
  if "$@"; then passed=$((passed+1)); else echo "FAIL: $name"; fail=$((fail+1)); fi
}
py() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); $2" "$1"; }

# A Reshape whose target lives in an absent external file: sizes after it are unknown -> no verdict.
absent=$data/exports/reshape_absent.onnx
"$cli" "$absent" --gpu "RTX 4090" --json >"$tmp/absent.json"; rc=$?
check "absent: --json exits 0" test $rc -eq 0
check "absent: fit.fits is null" py "$tmp/absent.json" "sys.exit(0 if j['fit']['fits'] is None else 1)"
check "absent: fit.max_batch is null" py "$tmp/absent.json" "sys.exit(0 if j['fit'].get('max_batch') is None else 1)"
check "absent: 2 unknown tensors" py "$tmp/absent.json" "sys.exit(0 if j['fit']['unknown']['tensors'] == 2 and j['model']['unknown_shapes'] == 2 else 1)"
"$cli" "$absent" --gpu "RTX 4090" --max-batch >"$tmp/absent.txt"
check "absent: text says cannot tell" grep -q "cannot tell: 2 tensors of unknown size, first at node net/Reshape" "$tmp/absent.txt"
check "absent: text gives no verdict" bash -c "! grep -Eq 'Fits on|Does not fit' '$tmp/absent.txt'"
check "absent: --max-batch cannot tell" grep -q "Max batch on .*: cannot tell" "$tmp/absent.txt"
if command -v pdftotext >/dev/null && "$cli" "$absent" --gpu "RTX 4090" --pdf "$tmp/absent.pdf" >/dev/null 2>"$tmp/pdf.err"; then
  # One line, no spaces, ligatures undone: the sentence may wrap, and pdftotext gives "ﬁ" for "fi".
  pdftotext "$tmp/absent.pdf" - | sed 's/\xef\xac\x81/fi/g' | tr -d ' \n' >"$tmp/absent.pdf.txt"
  check "absent: PDF cover says cannot tell" grep -q "Cannottell:2tensorsofunknownsize,firstatnodenet/Reshape" "$tmp/absent.pdf.txt"
  check "absent: PDF gives no verdict" bash -c "! grep -Eq 'Fitson|Doesnotfiton' '$tmp/absent.pdf.txt'"
elif grep -q "GUI" "$tmp/pdf.err" 2>/dev/null; then
  echo "skip: --pdf needs the GUI build"
else
  echo "FAIL: absent: --pdf"; cat "$tmp/pdf.err"; fail=$((fail+1))
fi

# The dynamo exports: every shape known, module names in JSON, CSV and the Netron attachment alike.
llama=$data/hf/llama_small.onnx
"$cli" "$llama" --batch 4 --set seq=256 --gpu h100 --json --netron "$tmp/llama.netron.json" >"$tmp/llama.json"
check "llama: 0 unknown shapes" py "$tmp/llama.json" "sys.exit(0 if j['model']['unknown_shapes'] == 0 else 1)"
check "llama: a verdict" py "$tmp/llama.json" "sys.exit(0 if j['fit']['fits'] is True and j['fit']['max_batch'] > 4 else 1)"
check "llama: JSON paths by module" py "$tmp/llama.json" \
  "sys.exit(0 if 'm/model/layers.0/self_attn/q_proj/MatMul' in [l['path'] for l in j['layers']] else 1)"
"$cli" "$llama" --batch 4 --set seq=256 --csv >"$tmp/llama.csv"
check "llama: CSV paths by module" grep -q "^m/model/layers.0/self_attn/q_proj/MatMul," "$tmp/llama.csv"
check "llama: Netron attachment by module" grep -q "m/model/layers.0/self_attn/q_proj/MatMul" "$tmp/llama.netron.json"
if command -v pdftotext >/dev/null && "$cli" "$llama" --batch 4 --set seq=256 --gpu h100 --pdf "$tmp/llama.pdf" >/dev/null 2>&1; then
  check "llama: PDF layer table by module" bash -c "pdftotext '$tmp/llama.pdf' - | grep -q 'm/model/layers.0/self_attn/Softmax'"
fi
"$cli" "$llama" --batch 4 --set seq=256 --depth 4 >"$tmp/llama.txt"
check "llama: table by module" grep -q "self_attn" "$tmp/llama.txt"

# --max seq: the longest context that fits, and the need one token above it does not.
"$cli" "$llama" --batch 8 --gpu h100 --allocator exact --max seq --json >"$tmp/max.json"
check "--max seq: fit.max" py "$tmp/max.json" "sys.exit(0 if j['fit']['max']['symbol'] == 'seq' and j['fit']['max']['value'] > 1 else 1)"
best=$(py "$tmp/max.json" "print(j['fit']['max']['value'])")
"$cli" "$llama" --batch 8 --set seq="$best" --gpu h100 --allocator exact --json >"$tmp/at.json"
"$cli" "$llama" --batch 8 --set seq=$((best + 1)) --gpu h100 --allocator exact --json >"$tmp/above.json"
check "--max seq: seq=$best fits" py "$tmp/at.json" "sys.exit(0 if j['fit']['fits'] is True else 1)"
check "--max seq: seq=$((best + 1)) does not" py "$tmp/above.json" "sys.exit(0 if j['fit']['fits'] is False else 1)"
"$cli" "$llama" --max nosuch >/dev/null 2>"$tmp/err"; rc=$?
check "--max nosuch: exit 2" test $rc -eq 2
check "--max nosuch: names the symbols" grep -q "no symbol named 'nosuch' (symbols: batch, seq)" "$tmp/err"

echo "$passed passed, $fail failed"
[ $fail -eq 0 ]
