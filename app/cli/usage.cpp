// headroom-cli --help: the flags options.cpp parses, grouped as docs/DESIGN.md lists them.
#include "options.h"

namespace headroom::cli {

std::string usage()
{
    return R"(Usage: headroom-cli MODEL.onnx [options]

Will this model fit on my GPU, and where does the memory go?

Task (the window's task switch; MODEL is an ONNX file, a config.json or a checkpoint folder)
  --task train|finetune|generate|serve
                         train: the training step, every weight trained; finetune: the same with --lora, --ia3,
                         --quant or --recipe (full fine-tuning without them); generate: an ONNX graph's forward
                         pass (--mode infer), a config's generate() plan (--serve hf-generate); serve: vLLM's
                         startup plan (--serve vllm; a config only). Flags that ask another question are refused
Shapes
  --batch N              batch size (the model's batch symbol)
  --set NAME=VALUE       value of any other symbol (sequence length, ...); repeatable
  --vary NAME            the symbol's value changes from step to step up to the one set (batches padded to their
                         longest sample, not packed): the reserved peak is the highest any such step makes; the
                         allocated peak and the verdict stay the longest step's
Training set-up
  --mode train|infer     (default train)
  --dtype fp32|fp16|bf16|amp-fp16|amp-bf16|mixed-fp16|mixed-bf16|int8|int4   (default fp32)
  --optimizer sgd|momentum|adam|adamw|adagrad|rmsprop|adadelta|lion|lamb|adam8bit|adafactor|paged-adamw|paged-adamw8bit   (default adam)
  --loss ce|mse|none|chunked-ce|fused-linear-ce|chunked-ce-16
                         loss added after the first output (default ce); chunked-ce: torchtune's
                         CEWithChunkedOutputLoss (8 chunks upcast to fp32 one at a time); fused-linear-ce:
                         Liger's fused linear cross-entropy (lm_head + loss over token chunks, no logits);
                         chunked-ce-16: litgpt's chunked_cross_entropy (16-bit logits, no fp32 upcast)
  --checkpoint K         gradient-checkpoint segments (checkpoint_sequential)
  --attention eager|sdpa|flash2|flex
                         attention as Hugging Face's attn_implementation runs it: written out (eager), SDPA's
                         kernel choice (sdpa), flash_attention_2 (fp32 operands cast to 16 bits), flex_attention
                         (default sdpa, printed "fused"; fused and math: the old names of sdpa and eager)
  --accumulate S         gradient-accumulation steps (micro-batch = batch / S)
  --inplace              inplace activations (ReLU(inplace=True) & co.)
  --freeze PATTERN       freeze layers whose path matches (glob); repeatable; !PATTERN keeps them trainable
  --lora r=R,alpha=A,dropout=P,dtype=fp32|bf16|fp16,dora=true,targets=q_proj,v_proj|all-linear
                         LoRA adapters as PEFT inserts them (no targets: PEFT's default for the model_type;
                         dtype: the adapters', default fp32 as PEFT keeps them; dora=true: DoRA
                         (use_dora), a trained magnitude per output and its forward's saved tensors;
                         target_parameters=mlp.experts.gate_up_proj,...: 3D experts, PEFT's ParamWrapper;
                         init_lora_weights=mica: MiCA, lora_B frozen, only lora_A trains)
  --ia3 default|dtype=fp32|bf16|fp16,targets=k_proj,v_proj,down_proj,feedforward=down_proj
                         IA3 as PEFT inserts it: a trained vector scales each target's output, or its input
                         for the feedforward modules (default: PEFT's lists for the model_type)
  --hot-expert-share F   MoE: the hottest expert's share of the tokens (default balanced, k/E)
  --quant nf4|fp4|int8   bitsandbytes weights for every Linear but the output layer (QLoRA; with --framework litgpt
                         the output layer too, as Lightning's BitsandbytesPrecision converts it)
  --double-quant         4-bit: quantize the absmax too (bnb_4bit_use_double_quant)
  --compute-dtype bf16|fp16|fp32   4-bit compute dtype (default bf16)
  --bnb-version X.Y.Z    the bitsandbytes release: before 0.43.2 every 4-bit Linear keeps its input for backward
                         (default today's, keeping nothing; --framework litgpt: its pinned 0.42.0)
  --no-kbit-prep         without prepare_model_for_kbit_training's fp32 cast of the other parameters
  --grad-checkpoint layers|off   Hugging Face checkpointing: one checkpoint per decoder layer
  --offload-activations  torchtune's activation offloading: each checkpoint input goes to pinned host memory after
                         its forward and comes back at its recomputation (needs checkpointing; default off)
  --recipe peft-defaults|qlora-paper   LoRA settings in one word
  --framework hf|torchtune|litgpt
                         the switches the framework's recipes set, under any flag given (default hf: none);
                         torchtune: bf16, adamw, chunked-ce, --grad-checkpoint layers, bf16 adapters, no k-bit
                         prep, NF4 double-quantized; litgpt: bf16, adamw (paged-adamw with --quant), chunked-ce-16,
                         no checkpointing, bf16 adapters, no k-bit prep
  --torch 2|1.13|1.10    the PyTorch release whose autograd formulas and defaults run the step (default 2):
                         before 2.0 no SDPA, zero_grad() keeps the gradients, optimizers loop per parameter;
                         1.10 (and before) softmax and log_softmax also keep their input for backward
  --transformers-version X.Y.Z   the transformers release of a config.json model (default today's): before 4.46
                         a causal LM returns its logits in fp32 and takes the loss on a shifted fp32 copy
  --loop trainer|custom  what the training loop holds (default trainer: Hugging Face's Trainer returns the loss
                         alone); custom: `outputs = model(...); loss.backward(); optimizer.step()` keeps the
                         outputs' logits allocated to the end of the step
Hardware
  --gpu NAME             GPU preset (e.g. "RTX 4090", a100-80, h100); see --gpu list
  --capacity BYTES       custom GPU capacity (24GiB, 16000MB, ...)
  --margin BYTES         memory kept free on the GPU (default 0)
  --gpus N --strategy ddp|dp|balanced-dp|zero1|zero2|zero3|fsdp|fsdp-no-shard [--gpu0-batch B] [--offload]
  --fsdp-orig-params     FSDP with use_orig_params=True: one FlatParameter per layer, frozen and trainable mixed,
                         its gradient the whole layer's (Lightning Fabric; --framework litgpt sets it)
  --fsdp-no-sync         gradient accumulation under FSDP.no_sync(): every gradient unsharded between optimizer
                         steps (with --accumulate; --framework litgpt sets it)
  --allocator exact|caching|expandable   allocator model (default caching)
Serving (MODEL is a Hugging Face config.json; docs/SERVING.md)
  --serve vllm           vLLM V1's startup plan per GPU instead of the training figure: weights, profile peak,
                         KV cache blocks and tokens, maximum concurrency, or "does not start" with vLLM's reason
                         and the longest max_model_len that starts (--gpu takes a comma-separated list;
                         default H100)
  --gpu-memory-utilization F   fraction of the device vLLM may use (default 0.9)
  --max-model-len N      context length (default the config's max_position_embeddings)
  --tp N, --pp N         tensor / pipeline parallel size
  --ep                   MoE: expert parallel over the TP ranks (vLLM --enable-expert-parallel)
  --block-size N         tokens per KV block (default 16)
  --kv-cache-dtype auto|fp8|fp8_e4m3|fp8_e5m2
  --max-num-seqs N, --max-num-batched-tokens N   (default vLLM's for the GPU: 1024 / 8192 on >= 70 GiB)
  --enforce-eager        no CUDA graphs
  --quantization fp8|int8|gptq|awq|bitsandbytes|mxfp4   weights as this format (default the config's)
  --dtype bfloat16|float16|float32   the served dtype (default the config's 16-bit type)
  --vllm-version 0.11|0.19|0.21   whose rules (default 0.21: the CUDA-graph estimate is subtracted; 0.11: the
                         sampler's sort sets the profile peak)
  --gpu-free BYTES       memory free on the device at startup (another process holds the rest)
  --serve hf-generate    Hugging Face generate()'s peak per GPU (transformers 4.56, sdpa, greedy): weights, KV
                         cache after the prefill and at the end, the prefill's activation peak (last-position
                         logits in fp32), the last step's; the largest batch and the longest prompt that fit
  --prompt-len N, --new-tokens N   prompt tokens per sequence and max_new_tokens (default 512, 256)
  --batch N              sequences generated at once (default 1)
  --cache dynamic|static DynamicCache (grows each step) or cache_implementation="static" (preallocated)
Output
  --depth D              layer-tree depth of the table (default 3)
  --all-nodes            unfold the shape computations and list every graph node in the table
  --table                print the table even when --pdf/--csv FILE/--netron/--probe-plan write files
  --max-batch            search the largest batch that fits
  --max SYMBOL           search the largest value of SYMBOL that fits (e.g. --max seq: longest context)
  --timeline             include the forward/backward timeline (JSON)
  --json                 one JSON object (schema headroom.report/1)
  --csv [FILE.csv]       the layer table as CSV (one row per node), on stdout or into FILE.csv
  --netron FILE          write a Netron attachment (per-node metrics)
  --pdf FILE             write the PDF memory report
  --pdf-all-nodes        the PDF lists every graph node instead of the layer tree
  --probe                replay the plan on the GPU with headroom-probe
  --probe-path PATH      headroom-probe executable (default: beside this program)
  --probe-plan FILE      write the probe's plan (JSON) without running it, to replay elsewhere
  --probe-timeout S      probe time limit in seconds (default 120)
  --compare FILE         set a measurement beside the theory: gpu_truth.py JSON lines (the line
                         matching this model and configuration) or torch.cuda.memory._snapshot() as JSON
  --lang LANG            language of the PDF report (en, zh_CN)
  --bench [N]            time N re-evaluations of this configuration and exit
  -h, --help             this help
  --version              version

Exit codes: 0 done, 1 the model or a file could not be used (one line on stderr says why), 2 bad usage.
)";
}

} // namespace headroom::cli
