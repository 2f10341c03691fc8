#!/usr/bin/env bash
# headroom-cli CONFIG.json --serve vllm: the summary line, the JSON `serving` objects, refusals, one-line errors
# and usage exits (docs/SERVING.md).
set -u
cli=$1; data=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; passed=0
check() {
  local name=$1; shift
  if "$@"; then passed=$((passed+1)); else echo "FAIL: $name"; fail=$((fail+1)); fi
}
expect_exit() {
  local code=$1; shift
  "$cli" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ "$rc" -eq "$code" ] || { echo "  exit $rc, expected $code for: $*"; cat "$tmp/err"; return 1; }
}
llama="$data/external/meta-llama--Llama-3.1-8B-Instruct.json"

# Llama-3.1-8B, 8192 tokens, util 0.95, vLLM 0.19 on the H100: the llm-d log says 29,751 blocks, 58.11x.
check "starts" expect_exit 0 "$llama" --serve vllm --max-model-len 8192 --gpu-memory-utilization 0.95 --vllm-version 0.19
check "summary" grep -q "^serves 58 concurrent 8k-token requests on H100 80 GB (TP 1, vLLM 0.19)" "$tmp/out"
check "json" expect_exit 0 "$llama" --serve vllm --max-model-len 8192 --gpu h100,4090 --json
check "one object per GPU" bash -c "[ \$(grep -c '\"engine\": \"vllm\"' '$tmp/out') -eq 2 ]"
for f in starts reason weights activation_peak non_torch cuda_graphs kv_cache kv_blocks kv_tokens max_concurrency \
         max_model_len_that_starts vllm_version settings; do
  check "field $f" grep -q "\"$f\":" "$tmp/out"
done
check "does not start" expect_exit 0 "$llama" --serve vllm --gpu 4090
check "vLLM's reason and the longest length" grep -q "^does not start on .*To serve at least one request.*longest max_model_len that starts: " "$tmp/out"
check "TP must divide heads" expect_exit 0 "$llama" --serve vllm --tp 3
check "heads reason" grep -q "must be divisible by tensor parallel size (3)" "$tmp/out"
echo '{"hidden_size": 64}' > "$tmp/partial.json"
check "cannot tell" expect_exit 0 "$tmp/partial.json" --serve vllm
check "names the fields" grep -q "cannot tell.*lacks num_hidden_layers" "$tmp/out"
echo '{' > "$tmp/broken.json"
check "bad json exits 1" expect_exit 1 "$tmp/broken.json" --serve vllm
check "one line naming the file" bash -c "[ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q broken.json '$tmp/err'"
check "missing file exits 1" expect_exit 1 "$tmp/none.json" --serve vllm
check "unknown engine exits 2" expect_exit 2 "$llama" --serve sglang
check "serving flag alone exits 2" expect_exit 2 "$llama" --tp 2
check "bad utilization exits 2" expect_exit 2 "$llama" --serve vllm --gpu-memory-utilization 1.5
check "bad version exits 2" expect_exit 2 "$llama" --serve vllm --vllm-version 0.5

# Hugging Face generate(): Llama-3.1-8B bf16, 2048 + 512 tokens, batch 8 (tst_hfgenerate works the figures by hand).
check "hf-generate" expect_exit 0 "$llama" --serve hf-generate --prompt-len 2048 --new-tokens 512 --batch 8
check "hf summary" grep -q "^fits on H100 80 GB (transformers 4.56 generate(), bf16, dynamic cache, batch 8, 2048 + 512 tokens): peak 18.8 GiB at the prefill.*max batch 132" "$tmp/out"
check "hf json" expect_exit 0 "$llama" --serve hf-generate --cache static --batch 8 --prompt-len 2048 --new-tokens 512 --json
for f in fits weights kv_cache_prefill kv_cache_end prefill decode peak max_batch longest_prompt; do
  check "hf field $f" grep -q "\"$f\":" "$tmp/out"
done
check "hf peak bytes" grep -q '"peak": 20699422720' "$tmp/out"
check "hf flag under vllm exits 2" expect_exit 2 "$llama" --serve vllm --prompt-len 100
check "vllm flag under hf exits 2" expect_exit 2 "$llama" --serve hf-generate --tp 2
check "bad cache exits 2" expect_exit 2 "$llama" --serve hf-generate --cache paged
check "hf cannot tell" expect_exit 0 "$tmp/partial.json" --serve hf-generate
check "hf names the fields" grep -q "^cannot tell.*lacks num_hidden_layers" "$tmp/out"

echo "$passed passed, $fail failed"
[ "$fail" -eq 0 ]
