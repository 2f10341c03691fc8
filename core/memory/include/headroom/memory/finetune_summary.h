#pragma once
#include "headroom/base/finetune.h"

#include <cstdint>
#include <string>
#include <vector>

namespace headroom {

struct Model;
struct Config;
struct Evaluation;

// The fine-tuning figures the report shows beside the breakdown (bytes at this configuration).
struct FineTuneSummary
{
    std::string method;          // "full", "lora", "qlora"; "inference" when nothing trains (--mode infer)
    bool kbitPrep = false;       // prepare_model_for_kbit_training applied: a training step with quantized weights
    int64_t trainableParams = 0; // what requires grad (PEFT's print_trainable_parameters)
    int64_t adapterParams = 0;
    int64_t frozenParams = 0;
    int64_t adapterBytes = 0; // lora_A/lora_B weights
    int64_t adapterGradientBytes = 0;
    int64_t adapterOptimizerBytes = 0;
    int64_t frozenBytes = 0;    // frozen base weights as stored (quantized ones at their 4/8-bit size)
    int64_t quantizedBytes = 0; // the 4/8-bit Linear weights (incl. absmax / scales)
    int64_t quantizedParams = 0;
    int64_t dequantTransientBytes = 0; // the largest dequantized weight (compute dtype), counted at the peak
};
FineTuneSummary summarizeFineTune(const Model& model, const Config& config, const Evaluation& evaluation);

// Per tensor: 1 where bitsandbytes holds the parameter as a 4-bit Params4bit under the configuration
// (Quant::NF4 / FP4: the Linear weights quant_weights.cpp names); empty when nothing is 4-bit.
std::vector<uint8_t> fourBitWeights(const Model& model, const Config& config);

// The one meaning of "trainable" every output uses: the parameter elements that require grad under the
// configuration's freeze patterns and LoRA adapters (PEFT's print_trainable_parameters); frozen: the rest.
struct ParamCounts
{
    int64_t trainable = 0;
    int64_t frozen = 0;
    int64_t trainableBytes = 0; // at the file's dtypes, as ModelInfo's parameter bytes
    int64_t frozenBytes = 0;
    int64_t total() const { return trainable + frozen; }
};
ParamCounts countParams(const Model& model, const Config& config);

} // namespace headroom
