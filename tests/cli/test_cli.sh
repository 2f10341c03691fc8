#!/usr/bin/env bash
# End-to-end checks of headroom-cli as users and scripts call it: exit codes, --help/--version, the JSON
# contract of docs/DESIGN.md, and one-line errors that name the file.
set -u
cli=$1; data=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; passed=0
check() { # name, condition...
  local name=$1; shift
  if "$@"; then passed=$((passed+1)); else echo "FAIL: $name"; fail=$((fail+1)); fi
}
expect_exit() { # code, args...
  local code=$1; shift
  "$cli" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ "$rc" -eq "$code" ] || { echo "  exit $rc, expected $code for: $*"; cat "$tmp/err"; return 1; }
}
one_line_naming() { # file-substring: stderr is one line and names it
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$1" "$tmp/err" || { echo "  stderr:"; cat "$tmp/err"; return 1; }
}

check "help exits 0" expect_exit 0 --help
check "help mentions --batch" grep -q -- "--batch" "$tmp/out"
check "version exits 0" expect_exit 0 --version
check "version names the program" grep -q "headroom-cli" "$tmp/out"
check "no model is usage" expect_exit 2
check "--gpu list needs no model" expect_exit 0 --gpu list
check "--gpu list lists the H100" grep -q "H100" "$tmp/out"
check "unknown option is usage" expect_exit 2 "$data/resnet18.onnx" --frobnicate
check "bad batch is usage" expect_exit 2 "$data/resnet18.onnx" --batch 0
check "bad dtype is usage" expect_exit 2 "$data/resnet18.onnx" --dtype fp7
check "unknown symbol is usage" expect_exit 2 "$data/resnet18.onnx" --set nosuch=3
check "unknown symbol names the file" one_line_naming resnet18.onnx
check "unknown gpu is usage" expect_exit 2 "$data/resnet18.onnx" --gpu "Voodoo 5"
check "missing file exits 1" expect_exit 1 "$tmp/absent.onnx"
check "missing file: one line naming it" one_line_naming absent.onnx
printf 'this is not an onnx model' >"$tmp/garbage.onnx"
check "garbage exits 1" expect_exit 1 "$tmp/garbage.onnx"
check "garbage: one line naming it" one_line_naming garbage.onnx
head -c 3000 "$data/resnet18.onnx" >"$tmp/truncated.onnx"
check "truncated exits 1" expect_exit 1 "$tmp/truncated.onnx"
check "truncated: one line naming it" one_line_naming truncated.onnx

check "table exits 0" expect_exit 0 "$data/resnet18.onnx" --batch 8
check "table shows layer1" grep -q "layer1" "$tmp/out"
check "table shows the verdict" grep -Eq "Fits on|Does not fit" "$tmp/out"

check "json exits 0" expect_exit 0 "$data/tiny_gpt.onnx" --json --batch 2 --set seq=64 --timeline --optimizer adamw
cp "$tmp/out" "$tmp/tiny.json"
check "json has the required fields" python3 - "$tmp/tiny.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "headroom.report/1"
for k in ["file", "sha256", "producer", "ir_version", "opsets", "nodes", "unknown_shapes", "warnings"]:
    assert k in j["model"], k
assert j["symbols"] == {"batch": 2, "seq": 64}, j["symbols"]
for k in ["trainable", "buffers", "trainable_bytes", "buffer_bytes"]:
    assert isinstance(j["params"][k], int), k
for k in ["weights", "gradients", "optimizer", "master_weights", "activations_saved", "activations_peak",
          "workspace", "context", "peak", "reserved_peak", "classic_estimate"]:
    assert isinstance(j["memory"][k], int), k
for k in ["gpu", "capacity", "fits", "headroom", "max_batch"]:
    assert k in j["fit"], k
assert j["config"]["optimizer"] == "adamw" and j["config"]["batch"] == 2
assert len(j["layers"]) == j["model"]["nodes"]
for l in j["layers"]:
    assert set(["path", "op", "output_shapes", "params", "activation_bytes", "saved_bytes"]) <= set(l)
assert j["layers"][-1]["output_shapes"][0] == [2, 64, 8000], j["layers"][-1]
assert j["model"]["unknown_shapes"] == 0
assert j["params"]["trainable"] == 5469696
assert j["memory"]["optimizer"] == 8 * j["params"]["trainable"]   # AdamW: two fp32 moments
assert j["memory"]["gradients"] == 4 * j["params"]["trainable"]
assert j["memory"]["reserved_peak"] >= j["memory"]["peak"] > j["memory"]["weights"]
phases = {p["phase"] for p in j["timeline"]}
assert {"forward", "backward", "optimizer"} <= phases, phases
assert max(p["high"] for p in j["timeline"]) == j["memory"]["peak"]  # within-step high-water mark
assert all(p["high"] >= p["allocated"] for p in j["timeline"])
PY

check "csv exits 0" expect_exit 0 "$data/resnet18.onnx" --csv
check "csv header" grep -q "^path,op,output_shapes,params,activation_bytes,saved_bytes$" "$tmp/out"
"$cli" "$data/resnet18.onnx" --json >"$tmp/r18.json" 2>/dev/null
check "csv one row per node" test "$(($(wc -l <"$tmp/out") - 1))" -eq "$(python3 -c "import json; print(json.load(open('$tmp/r18.json'))['model']['nodes'])")"

check "netron exits 0" expect_exit 0 "$data/resnet18.onnx" --netron "$tmp/r.json" --json
check "netron attachment has a metric per node" python3 - "$tmp/r.json" "$tmp/out" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert a["signature"] == "netron:attachment"
nodes = {m["target"] for m in a["metrics"] if m["kind"] == "node" and m["name"] == "activation_bytes"}
assert len(nodes) == r["model"]["nodes"], (len(nodes), r["model"]["nodes"])
PY
check "unwritable netron path exits 1" expect_exit 1 "$data/resnet18.onnx" --netron "$tmp/no/such/dir/r.json"
check "unwritable path: one line naming it" one_line_naming "no/such/dir"

# Commands that write a file say one line on what they wrote; the table only with --table.
check "--probe-plan exits 0" expect_exit 0 "$data/resnet18.onnx" --probe-plan "$tmp/plan.json"
check "--probe-plan: one line naming the file" test "$(wc -l <"$tmp/out")" -eq 1 -a -n "$(grep plan.json "$tmp/out")"
check "--probe-plan: plan written" python3 -c "import json; json.load(open('$tmp/plan.json'))"
check "--netron alone: one line" expect_exit 0 "$data/resnet18.onnx" --netron "$tmp/n.json"
check "--netron alone: no table" test "$(wc -l <"$tmp/out")" -eq 1
check "--csv FILE: one line" expect_exit 0 "$data/resnet18.onnx" --csv "$tmp/t.csv"
check "--csv FILE: the file has the header" grep -q "^path,op,output_shapes,params,activation_bytes,saved_bytes$" "$tmp/t.csv"
check "--csv FILE: stdout is one line" test "$(wc -l <"$tmp/out")" -eq 1
check "--table brings the table back" expect_exit 0 "$data/resnet18.onnx" --netron "$tmp/n.json" --table
check "--table: the table" grep -q "^Layer " "$tmp/out"
check "--netron with --json: stdout is the JSON alone" expect_exit 0 "$data/resnet18.onnx" --netron "$tmp/n2.json" --json
check "--netron with --json: parses" python3 -c "import json; json.load(open('$tmp/out'))"
check "--netron with --json: the line on stderr" grep -q "n2.json" "$tmp/err"
check "--pdf-all-nodes without --pdf is usage" expect_exit 2 "$data/resnet18.onnx" --pdf-all-nodes

# Shape computations: one folded row in the table; --all-nodes unfolds them; the JSON flags each node.
check "bert: table" expect_exit 0 "$data/bert_like.onnx" --depth 8
folded=$(grep -c "shape computations (" "$tmp/out")
check "bert: folded rows in the table" test "$folded" -ge 1
check "bert: --all-nodes" expect_exit 0 "$data/bert_like.onnx" --depth 8 --all-nodes
check "bert: --all-nodes unfolds them" test "$(grep -c "shape computations (" "$tmp/out")" -eq 0
check "bert: --all-nodes lists Shape nodes" grep -q " Shape " "$tmp/out"
check "bert: json flags" expect_exit 0 "$data/bert_like.onnx" --json
check "bert: every Shape node is a shape computation, no MatMul is" python3 -c "
import json; j=json.load(open('$tmp/out'))
assert all(l['shape_computation'] for l in j['layers'] if l['op']=='Shape')
assert not any(l['shape_computation'] for l in j['layers'] if l['op'] in ('MatMul','Gemm','Softmax','LayerNormalization'))
assert sum(l['shape_computation'] for l in j['layers']) > 0"

check "infer mode" expect_exit 0 "$data/resnet50.onnx" --mode infer --batch 4 --json
check "infer has no gradients" python3 -c "import json,sys; j=json.load(open('$tmp/out')); assert j['memory']['gradients']==0 and j['memory']['optimizer']==0"
check "multi-gpu json has gpus" expect_exit 0 "$data/resnet18.onnx" --batch 16 --gpus 4 --strategy dp --json
check "gpus list has 4 entries" python3 -c "import json; j=json.load(open('$tmp/out')); assert len(j['gpus'])==4; assert j['gpus'][0]['peak']>j['gpus'][1]['peak']"
check "multi-gpu verdict is the heaviest GPU's" python3 -c "import json; j=json.load(open('$tmp/out')); assert j['fit']['needed']==max(g['needed'] for g in j['gpus']); assert j['fit']['max_batch']>=16"

# --attention: bert_like at (8, 128), per layer (fp32, MiB = 1048576 B). math keeps q/sqrt(d) 1, the k^T and v
# copies 1 + 1, the softmax [32, 128, 128] 2 = 5 MiB; fused keeps the in_proj output q|k|v 3, its output 1 and
# a logsumexp [32, 128] of 16 KiB. Four layers: 4 x (1 MiB - 16 KiB) = 4128768 B more under math.
check "bad attention is usage" expect_exit 2 "$data/bert_like.onnx" --attention flash
check "attention fused" expect_exit 0 "$data/bert_like.onnx" --batch 8 --set seq=128 --json
cp "$tmp/out" "$tmp/fused.json"
check "attention math" expect_exit 0 "$data/bert_like.onnx" --batch 8 --set seq=128 --attention math --json
check "attention in config, math keeps the scores" python3 - "$tmp/fused.json" "$tmp/out" <<'PY'
import json, sys
f, m = (json.load(open(p)) for p in sys.argv[1:3])
assert f["config"]["attention"] == "fused" and m["config"]["attention"] == "math"
assert m["memory"]["activations_saved"] - f["memory"]["activations_saved"] == 4 * (1048576 - 32 * 128 * 4)
PY

# Hugging Face's names for the same kernels: sdpa is fused, eager is math (printed as before); flash2 runs
# 16 bits only; the chunked losses' names in the JSON.
check "attention sdpa is fused" expect_exit 0 "$data/bert_like.onnx" --batch 8 --set seq=128 --attention sdpa --json
check "sdpa prints fused" python3 -c "import json; assert json.load(open('$tmp/out'))['config']['attention'] == 'fused'"
check "attention eager is math" expect_exit 0 "$data/bert_like.onnx" --batch 8 --set seq=128 --attention eager --json
check "eager prints math" python3 -c "import json; assert json.load(open('$tmp/out'))['config']['attention'] == 'math'"
check "flash2 in fp32 is usage" expect_exit 2 "$data/bert_like.onnx" --attention flash2
check "flash2 in bf16" expect_exit 0 "$data/bert_like.onnx" --attention flash2 --dtype bf16 --json
check "flash2 prints flash2" python3 -c "import json; assert json.load(open('$tmp/out'))['config']['attention'] == 'flash2'"
check "flex" expect_exit 0 "$data/bert_like.onnx" --attention flex --json
check "bad loss is usage" expect_exit 2 "$data/resnet18.onnx" --loss chunked
for loss in chunked-ce fused-linear-ce chunked-ce-16; do
    check "loss $loss" expect_exit 0 "$data/hf/llama_small.config.json" --loss $loss --dtype bf16 --json
    check "loss $loss in config" python3 -c "import json; assert json.load(open('$tmp/out'))['config']['loss'] == '$loss'"
done

# --compare: the gpu_truth line of this model and configuration (tests/data/gpu/h100-points.jsonl:
# tiny_gpt b32 s512 SGD fp32 ran with max_allocated 3,241,405,440 B; tiny_gpt writes its attention out:
# --attention math), theory beside it.
check "compare exits 0" expect_exit 0 "$data/tiny_gpt.onnx" --batch 32 --set seq=512 --optimizer sgd --gpu h100 --attention math \
    --compare "$data/gpu/h100-points.jsonl" --json
check "compare block carries the measurement" python3 -c "import json; c=json.load(open('$tmp/out'))['compare']; assert c['allocated_peak']['measured']==3241405440; assert c['source']=='gpu_truth'; assert abs(c['allocated_peak']['error_pct'])<5"
check "compare human table" expect_exit 0 "$data/tiny_gpt.onnx" --batch 32 --set seq=512 --optimizer sgd \
    --compare "$data/gpu/h100-points.jsonl"
check "compare human table has the allocated peak" grep -q "allocated peak" "$tmp/out"
check "compare with no matching line exits 1" expect_exit 1 "$data/tiny_gpt.onnx" --batch 31 --compare "$data/gpu/h100-points.jsonl"
check "compare: one line naming the file" one_line_naming h100-points.jsonl
check "compare needs a file" expect_exit 2 "$data/tiny_gpt.onnx" --compare

echo "$passed passed, $fail failed"
[ "$fail" -eq 0 ]
