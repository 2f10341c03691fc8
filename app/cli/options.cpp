// The command line parsed into Options (flags, values, their combinations); the --help text is in usage.cpp.
#include "options.h"

#include "headroom/hardware/gpus.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace headroom::cli {
namespace {

std::optional<int64_t> parseInt(const std::string& s)
{
    int64_t v = 0;
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v);
    if (ec != std::errc() || p != end)
        return std::nullopt;
    return v;
}

// A share in (0, 1] (--hot-expert-share).
double fraction(const std::string& flag, const std::string& value)
{
    char* end = nullptr;
    const double f = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(f > 0 && f <= 1))
        throw UsageError{flag + ": expected a share of the tokens in (0, 1], got '" + value + "'"};
    return f;
}

int64_t positive(const std::string& flag, const std::string& value, int64_t max = int64_t{1} << 40)
{
    auto v = parseInt(value);
    if (!v || *v < 1 || *v > max)
        throw UsageError{flag + " expects a whole number from 1 to " + std::to_string(max) + ", got '" + value + "'"};
    return *v;
}

template <typename T>
T choice(const std::string& flag, const std::string& value, std::optional<T> parsed, const char* allowed)
{
    if (!parsed)
        throw UsageError{flag + ": unknown value '" + value + "' (one of " + allowed + ")"};
    return *parsed;
}

// --recipe: LoRA (and QLoRA) settings as their sources set them.
void applyRecipe(const std::string& v, Options& o)
{
    FineTune& f = o.config.finetune;
    if (v == "peft-defaults") {
        // LoraConfig() defaults: r=8, lora_alpha=8, lora_dropout=0, the model_type's default targets
        f.lora = LoraSpec{8, 8, 0, {}};
    } else if (v == "qlora-paper") {
        // Dettmers et al. 2023 (QLoRA), section 4: NF4 + double quantization, bf16 compute, r=64,
        // alpha=16, adapters on every linear layer, dropout 0.1 (0.05 for 33B/65B)
        f.lora = LoraSpec{64, 16, 0.1, {"all-linear"}};
        f.quant = Quant::NF4;
        f.doubleQuant = true;
        f.computeDtype = "bf16";
        f.computeBytes = 2;
        f.layerCheckpoint = true;                   // the paper's runs use gradient checkpointing
        o.config.optimizer = Optimizer::PagedAdamW; // paged 32-bit AdamW (the paper's paged optimizers)
        // qlora.py trains with --bf16 (TrainingArguments(bf16=True): autocast to bf16), the compute dtype; a
        // --dtype given with the recipe is kept.
        if (o.config.dtype == DtypePolicy::FP32)
            o.config.dtype = DtypePolicy::AmpBF16;
    } else {
        throw UsageError{"--recipe: expected peft-defaults or qlora-paper, got '" + v + "'"};
    }
}

// Flags that need another, or exclude one; a lone --gpus N implies DDP.
void checkCombinations(Options& o)
{
    if (o.model.empty())
        throw UsageError{"no model file given (see --help)"};
    if (o.json && o.csv)
        throw UsageError{"--json and --csv cannot be combined"};
    if (o.csvFile && o.csvFile->empty())
        throw UsageError{"--csv= needs a file name"};
    if (o.pdfAllNodes && !o.pdf)
        throw UsageError{"--pdf-all-nodes applies to --pdf FILE"};
    if (o.config.strategy != Strategy::Single && o.config.gpus < 2)
        throw UsageError{"--strategy needs --gpus N with N >= 2"};
    if (o.config.gpus > 1 && o.config.strategy == Strategy::Single)
        o.config.strategy = Strategy::DDP;
    if (o.config.gpu0Batch > 0 && o.config.strategy != Strategy::BalancedDP)
        throw UsageError{"--gpu0-batch applies to --strategy balanced-dp"};
    if (o.config.finetune.layerCheckpoint && o.config.checkpointSegments > 1)
        throw UsageError{"--grad-checkpoint layers and --checkpoint K cannot be combined"};
    if (o.config.finetune.lora.method == PeftMethod::IA3 && o.config.finetune.quant != Quant::None)
        throw UsageError{"--ia3 with --quant is not modelled (PEFT's ia3/bnb.py upcasts around the 4/8-bit Linear); "
                         "use --lora for QLoRA"};
    if (o.config.finetune.lora.method == PeftMethod::IA3 && o.config.modelCode == ModelCode::Litgpt)
        throw UsageError{"--ia3: lit-gpt's model code has no IA3 (its adapters are LoRA and LLaMA-Adapter); use "
                         "--framework hf"};
    if (o.config.finetune.quant != Quant::None && o.config.finetune.lora.r == 0 && o.config.mode == Mode::Train)
        throw UsageError{"--quant trains through adapters: add --lora (bitsandbytes 4/8-bit weights take no gradient)"};
    if (o.gpuName && o.capacity)
        throw UsageError{"--gpu and --capacity cannot be combined"};
    if (o.config.finetune.lora.dora && o.config.modelCode == ModelCode::Litgpt)
        throw UsageError{
            "--lora dora=true: lit-gpt's model code has no DoRA (its lora.py has none); use --framework hf "
            "or torchtune"};
    // transformers' flash path casts fp32 operands to the autocast dtype or a quantized model's
    // _pre_quantization_dtype, else to q_proj's own dtype (integrations/flash_attention.py get_target_dtype):
    // an fp32 model reaches flash_attn in fp32, which flash_attn refuses
    if (o.config.attention == Attention::Flash2 && o.config.dtype == DtypePolicy::FP32 &&
        o.config.finetune.quant == Quant::None)
        throw UsageError{"--attention flash2 runs fp16/bf16 only: add --dtype bf16 or amp-bf16 (or --quant)"};
}

} // namespace

std::optional<int64_t> parseBytes(const std::string& text)
{
    size_t i = 0;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
        ++i;
    if (i == 0)
        return std::nullopt;
    double number = 0;
    try {
        number = std::stod(text.substr(0, i));
    } catch (...) {
        return std::nullopt;
    }
    std::string unit;
    for (char c : text.substr(i))
        if (!std::isspace(static_cast<unsigned char>(c)))
            unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double scale = 1;
    if (unit.empty() || unit == "b")
        scale = 1;
    else if (unit == "k" || unit == "kib")
        scale = 1024.0;
    else if (unit == "m" || unit == "mib")
        scale = 1024.0 * 1024;
    else if (unit == "g" || unit == "gib")
        scale = 1024.0 * 1024 * 1024;
    else if (unit == "t" || unit == "tib")
        scale = 1024.0 * 1024 * 1024 * 1024;
    else if (unit == "kb")
        scale = 1e3;
    else if (unit == "mb")
        scale = 1e6;
    else if (unit == "gb")
        scale = 1e9;
    else if (unit == "tb")
        scale = 1e12;
    else
        return std::nullopt;
    const double bytes = number * scale;
    if (!(bytes >= 1) || bytes > 9.0e18)
        return std::nullopt;
    return static_cast<int64_t>(std::llround(bytes));
}

// The set-up flags (Shapes, Training set-up, Hardware in --help), one branch each; false: not one of them.
bool parseSetupFlag(const std::string& a, const std::function<std::string(const std::string&)>& value, Options& o)
{
    if (a == "--batch")
        o.batch = positive(a, value(a));
    else if (a == "--set") {
        const std::string v = value(a);
        const auto eq = v.find('=');
        if (eq == std::string::npos || eq == 0)
            throw UsageError{"--set expects NAME=VALUE, got '" + v + "'"};
        o.set.emplace_back(v.substr(0, eq), positive("--set " + v.substr(0, eq), v.substr(eq + 1)));
    } else if (a == "--vary") {
        o.vary = value(a);
    } else if (a == "--mode") {
        auto v = value(a);
        o.config.mode = choice(a, v, parseMode(v), "train, infer");
        o.modeGiven = true;
    } else if (a == "--dtype") {
        auto v = value(a);
        o.dtypeText = v;
        if (parseWeightFormat(v) && !parseDtype(v))
            return true; // vLLM's spelling (bfloat16, float16, float32): for --serve
        o.config.dtype = choice(a, v, parseDtype(v),
                                "fp32, fp16, bf16, amp-fp16, amp-bf16, mixed-fp16, mixed-bf16, int8, int4");
        o.presetUserSet |= kPresetDtype;
    } else if (a == "--optimizer") {
        auto v = value(a);
        o.config.optimizer = choice(
            a, v, parseOptimizer(v),
            "sgd, momentum, adam, adamw, adagrad, rmsprop, adadelta, lion, lamb, adam8bit, adafactor, paged-adamw, paged-adamw8bit");
        o.presetUserSet |= kPresetOptimizer;
    } else if (a == "--loss") {
        auto v = value(a);
        o.config.loss = choice(a, v, parseLoss(v), "ce, mse, none, chunked-ce, fused-linear-ce, chunked-ce-16");
        o.presetUserSet |= kPresetLoss;
    } else if (a == "--torch") {
        auto v = value(a);
        o.config.torch = choice(a, v, parseTorchVersion(v), "2, 1.13, 1.10");
    } else if (a == "--transformers-version") {
        const std::string v = value(a);
        const std::optional<bool> fp32 = transformersVersionFp32Logits(v);
        if (!fp32)
            throw UsageError{"--transformers-version: expected a transformers version such as 4.38.2, got '" + v + "'"};
        o.config.hfFp32Logits = *fp32;
    } else if (a == "--loop") {
        const std::string v = value(a);
        if (v != "trainer" && v != "custom")
            throw UsageError{"--loop: unknown value '" + v + "' (one of trainer, custom)"};
        o.config.loopKeepsOutput = v == "custom";
    } else if (a == "--framework") {
        auto v = value(a);
        o.framework = choice(a, v, parseFramework(v), "hf, torchtune, litgpt");
    } else if (a == "--checkpoint")
        o.config.checkpointSegments = static_cast<int>(positive(a, value(a), 4096));
    else if (a == "--attention") {
        auto v = value(a);
        o.config.attention = choice(a, v, parseAttention(v), "eager, sdpa, flash2, flex (fused, math: sdpa, eager)");
    } else if (a == "--accumulate")
        o.config.accumulate = static_cast<int>(positive(a, value(a), 65536));
    else if (a == "--inplace")
        o.config.inplace = true;
    else if (a == "--freeze")
        o.config.freeze.push_back(value(a));
    else if (a == "--hot-expert-share")
        o.config.hotExpertShare = fraction(a, value(a));
    else if (a == "--lora") {
        const std::string v = value(a);
        if (o.config.finetune.lora.method == PeftMethod::IA3)
            throw UsageError{"--lora and --ia3 cannot be combined (one PEFT method per model)"};
        if (auto err = parseLoraSpec(v, o.config.finetune.lora))
            throw UsageError{"--lora: " + *err};
        if (v.find("dtype=") != std::string::npos)
            o.presetUserSet |= kPresetAdapterDtype;
    } else if (a == "--ia3") {
        const std::string v = value(a);
        if (o.config.finetune.lora.r > 0)
            throw UsageError{"--lora and --ia3 cannot be combined (one PEFT method per model)"};
        if (auto err = parseIa3Spec(v, o.config.finetune.lora))
            throw UsageError{"--ia3: " + *err};
        if (v.find("dtype=") != std::string::npos)
            o.presetUserSet |= kPresetAdapterDtype;
    } else if (a == "--quant") {
        auto v = value(a);
        o.config.finetune.quant = choice(a, v, parseQuant(v), "nf4, fp4, int8");
    } else if (a == "--double-quant") {
        o.config.finetune.doubleQuant = true;
        o.presetUserSet |= kPresetDoubleQuant;
    } else if (a == "--bnb-version") {
        const std::string v = value(a);
        const std::optional<bool> keeps = bnbVersionKeepsMatmulInput(v);
        if (!keeps)
            throw UsageError{"--bnb-version: expected a bitsandbytes version such as 0.43.0, got '" + v + "'"};
        o.config.bnbKeepsMatmulInput = *keeps;
        o.presetUserSet |= kPresetBnbVersion;
    } else if (a == "--compute-dtype") {
        auto v = value(a);
        if (v != "bf16" && v != "fp16" && v != "fp32")
            throw UsageError{"--compute-dtype: expected bf16, fp16 or fp32, got '" + v + "'"};
        o.config.finetune.computeDtype = v;
        o.config.finetune.computeBytes = v == "fp32" ? 4 : 2;
    } else if (a == "--no-kbit-prep") {
        o.config.finetune.kbitPrep = false;
        o.presetUserSet |= kPresetKbitPrep;
    } else if (a == "--grad-checkpoint") {
        const std::string v = value(a);
        if (v != "layers" && v != "off")
            throw UsageError{"--grad-checkpoint: expected layers or off, got '" + v + "'"};
        o.config.finetune.layerCheckpoint = v == "layers";
        o.presetUserSet |= kPresetLayerCheckpoint;
    } else if (a == "--recipe") {
        applyRecipe(value(a), o);
        // a recipe's settings are the user's choice: a --framework preset leaves them
        o.presetUserSet |= kPresetOptimizer | kPresetLayerCheckpoint | kPresetDoubleQuant | kPresetDtype |
                           kPresetAdapterDtype;
    } else if (a == "--gpu")
        o.gpuName = value(a);
    else if (a == "--capacity") {
        auto v = value(a);
        o.capacity = parseBytes(v);
        if (!o.capacity)
            throw UsageError{"--capacity expects bytes such as 24GiB or 16000000000, got '" + v + "'"};
    } else if (a == "--margin") {
        auto v = value(a);
        auto b = parseBytes(v);
        if (!b && v != "0")
            throw UsageError{"--margin expects bytes such as 512MiB, got '" + v + "'"};
        o.config.marginBytes = b.value_or(0);
    } else if (a == "--gpus")
        o.config.gpus = static_cast<int>(positive(a, value(a), 4096));
    else if (a == "--strategy") {
        auto v = value(a);
        o.config.strategy = choice(a, v, parseStrategy(v),
                                   "ddp, dp, balanced-dp, zero1, zero2, zero3, fsdp, fsdp-no-shard");
    } else if (a == "--gpu0-batch")
        o.config.gpu0Batch = positive(a, value(a));
    else if (a == "--offload")
        o.config.offload = true;
    else if (a == "--fsdp-orig-params") {
        o.config.fsdpOrigParams = true;
        o.presetUserSet |= kPresetFsdp;
    } else if (a == "--fsdp-no-sync") {
        o.config.fsdpNoSync = true;
        o.presetUserSet |= kPresetFsdp;
    } else if (a == "--offload-activations") {
        o.config.offloadActivations = true;
        o.presetUserSet |= kPresetOffloadActivations;
    } else if (a == "--allocator") {
        auto v = value(a);
        o.config.allocator = choice(a, v, parseAllocator(v), "exact, caching, expandable");
    } else
        return false;
    return true;
}

// One flat chain, one branch per flag, grouped as --help groups them (the set-up groups in parseSetupFlag, the
// output flags here): it reads as the flag table, and a new flag is one branch beside its neighbours.
Options parseOptions(int argc, char** argv)
{
    Options o;
    auto need = [&](int& i, const std::string& flag) -> std::string {
        if (i + 1 >= argc)
            throw UsageError{flag + " needs a value"};
        return argv[++i];
    };
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        std::string inlineValue;
        bool hasInline = false;
        if (a.rfind("--", 0) == 0) {
            if (auto eq = a.find('='); eq != std::string::npos && a != "--set") {
                inlineValue = a.substr(eq + 1);
                a = a.substr(0, eq);
                hasInline = true;
            }
        }
        auto value = [&](const std::string& flag) { return hasInline ? inlineValue : need(i, flag); };
        if (a == "-h" || a == "--help")
            o.help = true;
        else if (a == "--version")
            o.version = true;
        else if (a == "--task") {
            const std::string v = value(a);
            o.task = choice(a, v, parseTask(v), "train, finetune, generate, serve");
        } else if (parseSetupFlag(a, value, o))
            continue;
        else if (a == "--depth")
            o.depth = static_cast<int>(positive(a, value(a), 64));
        else if (a == "--max-batch")
            o.maxBatch = true;
        else if (a == "--max")
            o.maxSymbol = value(a);
        else if (a == "--timeline")
            o.timeline = true;
        else if (a == "--json")
            o.json = true;
        else if (a == "--csv") {
            // A following argument ending in .csv is the file; anything else stays the model or an option.
            if (hasInline)
                o.csvFile = inlineValue;
            else if (i + 1 < argc && std::string(argv[i + 1]).size() > 4 && argv[i + 1][0] != '-' &&
                     std::string(argv[i + 1]).ends_with(".csv"))
                o.csvFile = argv[++i];
            else
                o.csv = true;
        } else if (a == "--all-nodes")
            o.allNodes = true;
        else if (a == "--pdf-all-nodes")
            o.pdfAllNodes = true;
        else if (a == "--table")
            o.table = true;
        else if (a == "--pdf")
            o.pdf = value(a);
        else if (a == "--netron")
            o.netron = value(a);
        else if (a == "--probe")
            o.probe = true;
        else if (a == "--probe-path")
            o.probePath = value(a);
        else if (a == "--probe-plan")
            o.probePlan = value(a);
        else if (a == "--compare")
            o.compare = value(a);
        else if (a == "--probe-timeout")
            o.probeTimeout = static_cast<int>(positive(a, value(a), 3600));
        else if (a == "--lang")
            o.lang = value(a);
        else if (a == "--bench") {
            o.bench = true;
            if (hasInline)
                o.benchIterations = static_cast<int>(positive(a, inlineValue, 10'000'000));
            else if (i + 1 < argc && parseInt(argv[i + 1]))
                o.benchIterations = static_cast<int>(positive(a, argv[++i], 10'000'000));
        } else if (parseServeFlag(a, value, o))
            continue;
        else if (!a.empty() && a[0] == '-' && a != "-")
            throw UsageError{"unknown option '" + a + "' (see --help)"};
        else if (o.model.empty())
            o.model = a;
        else
            throw UsageError{"only one model file is accepted; got '" + o.model + "' and '" + a + "'"};
    }
    if (o.help || o.version || (o.gpuName && *o.gpuName == "list" && o.model.empty()))
        return o; // --gpu list needs no model
    // The framework's recipe sets what no flag set (config.cpp kPresets); after the loop, so a flag wins
    // wherever it stands and a quantized run gets its recipe's QLoRA optimizer.
    if (o.framework)
        applyFramework(*o.framework, o.config, o.presetUserSet);
    applyTask(o);
    checkCombinations(o);
    checkServeCombinations(o);
    return o;
}

} // namespace headroom::cli
