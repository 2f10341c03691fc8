#!/usr/bin/env bash
# Writes every output a refactor must keep byte-identical into OUTDIR, one file per run, so two builds'
# folders can be compared with `diff -r`: --json --timeline (both allocator models and the settings that take
# other paths through the engine), --max-batch, the plain report, CSV, the probe plan, and the PDF as text.
# Usage: .ci/compare_outputs.sh path/to/headroom-cli OUTDIR   (run from the repository root)
set -uo pipefail
cli=$(realpath "$1"); out=$2
mkdir -p "$out"
models=$(ls tests/data/*.onnx tests/data/heldout/*.onnx tests/data/hf/*.onnx tests/data/hf/*.config.json \
            tests/data/lora/*.onnx tests/data/exports/*.onnx resources/samples/*.json resources/samples/*.onnx)
run() { # name, then arguments
    local name=$1; shift
    "$cli" "$@" > "$out/$name.out" 2> "$out/$name.err"; echo "rc=$?" >> "$out/$name.err"
}
for m in $models; do
    b=$(echo "$m" | tr '/' '_')
    run "$b.json" "$m" --json --timeline
    run "$b.exact" "$m" --json --timeline --allocator exact
    run "$b.expandable" "$m" --json --timeline --allocator expandable --dtype amp-bf16
    run "$b.maxbatch" "$m" --json --max-batch --gpu "RTX 4090"
    run "$b.adafactor" "$m" --json --timeline --optimizer adafactor --checkpoint 3
    run "$b.paged" "$m" --json --optimizer paged-adamw8bit --inplace --dtype bf16
    run "$b.cap" "$m" --json --capacity 3GiB
    run "$b.infer" "$m" --json --timeline --mode infer --batch 4
    run "$b.zero3" "$m" --json --gpus 4 --strategy zero3 --gpu a100-80
    run "$b.plain" "$m"
    run "$b.csv" "$m" --csv
    run "$b.plan" "$m" --probe-plan "$out/$b.plan.json"
    run "$b.pdf" "$m" --pdf "$out/$b.pdf"
    [ -f "$out/$b.pdf" ] && pdftotext -layout "$out/$b.pdf" "$out/$b.pdf.txt" && rm -f "$out/$b.pdf"
done
for m in tests/data/hf/llama_small.config.json tests/data/hf/llama_small.onnx tests/data/lora/tiny_llama.onnx \
         resources/samples/Llama-3.1-8B.json resources/samples/Mistral-7B-v0.1.json; do
    b=$(echo "$m" | tr '/' '_')
    run "$b.lora" "$m" --json --timeline --lora r=16,alpha=32,targets=q_proj,v_proj --dtype bf16 --set seq=512
    run "$b.qlora" "$m" --json --timeline --recipe qlora-paper --quant nf4 --double-quant --grad-checkpoint layers --set seq=1024
    run "$b.loraall" "$m" --json --lora r=8,targets=all-linear --max-batch --gpu "RTX 4090"
    run "$b.maxseq" "$m" --json --max seq --gpu "RTX 4090" --lora r=16
    run "$b.qlorapdf" "$m" --quant nf4 --lora r=16 --pdf "$out/$b.q.pdf" --lang zh_CN
    [ -f "$out/$b.q.pdf" ] && pdftotext -layout "$out/$b.q.pdf" "$out/$b.q.pdf.txt" && rm -f "$out/$b.q.pdf"
done
run gpulist --gpu list
run help --help
# The output folder's name and the PDF's date are the only differences expected between two runs.
sed -i "s|$out|OUT|g" "$out"/*.out
sed -i -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}(:[0-9]{2})?)?/DATE/g' "$out"/*.txt 2>/dev/null
echo "compare_outputs: $(ls "$out" | wc -l) files in $out"
