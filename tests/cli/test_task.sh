#!/usr/bin/env bash
# headroom-cli --task: each task prints exactly the report of the flags it stands for (routeTask's table:
# train/finetune the training step, generate an ONNX graph's forward pass or a config's generate(), serve vLLM's
# startup plan), and a flag that asks another question, or a task the model cannot answer, is one line, exit 2.
set -u
cli=$1; data=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; passed=0
check() { # name, condition...
  local name=$1; shift
  if "$@"; then passed=$((passed+1)); else echo "FAIL: $name"; fail=$((fail+1)); fi
}
same() { # args-a -- args-b: both exit 0 with the same stdout
  local a=() b=() seen=0
  for x in "$@"; do if [ "$x" = "--" ]; then seen=1; elif [ $seen -eq 0 ]; then a+=("$x"); else b+=("$x"); fi; done
  "$cli" "${a[@]}" >"$tmp/a" 2>"$tmp/ae" || { echo "  failed: ${a[*]}"; cat "$tmp/ae"; return 1; }
  "$cli" "${b[@]}" >"$tmp/b" 2>"$tmp/be" || { echo "  failed: ${b[*]}"; cat "$tmp/be"; return 1; }
  cmp -s "$tmp/a" "$tmp/b" || { echo "  differ: ${a[*]} vs ${b[*]}"; diff "$tmp/a" "$tmp/b" | head -5; return 1; }
}
refused() { # substring, args...: exit 2, one line on stderr holding the substring
  local what=$1; shift
  "$cli" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$what" "$tmp/err" ||
    { echo "  exit $rc for: $*"; cat "$tmp/err"; return 1; }
}
cfg=$data/hf/llama_small.config.json
onnx=$data/tiny_gpt.onnx

check "train is the default training report" same "$onnx" --task train --json -- "$onnx" --json
check "train on a config" same "$cfg" --task train --json -- "$cfg" --json
check "finetune with LoRA is the LoRA report" same "$cfg" --task finetune --lora r=8 --json -- "$cfg" --lora r=8 --json
check "generate on a graph is its forward pass" same "$onnx" --task generate --batch 4 --json -- "$onnx" --mode infer --batch 4 --json
check "generate on a config is generate()" same "$cfg" --task generate --gpu "RTX 4090" -- "$cfg" --serve hf-generate --gpu "RTX 4090"
check "serve on a config is vLLM" same "$cfg" --task serve --tp 2 --json -- "$cfg" --serve vllm --tp 2 --json
check "serve with the same --serve" same "$cfg" --task serve --serve vllm -- "$cfg" --serve vllm
check "help lists --task" grep -q -- "--task train|finetune|generate|serve" <("$cli" --help)

check "serving a graph is refused" refused "config.json" "$onnx" --task serve
check "train refuses adapters" refused "--task finetune" "$cfg" --task train --lora r=8
check "train refuses --serve" refused "--serve" "$cfg" --task train --serve vllm
check "generate refuses another engine" refused "hf-generate" "$cfg" --task generate --serve vllm
check "serve refuses --mode" refused "--mode" "$cfg" --task serve --mode train
check "generate on a graph refuses --mode train" refused "--mode train" "$onnx" --task generate --mode train
check "an unknown task names the choices" refused "train, finetune, generate, serve" "$onnx" --task pretrain

echo "$passed passed, $fail failed"
[ "$fail" -eq 0 ]
