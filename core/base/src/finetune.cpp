// Parsing and the byte formulas of finetune.h.
#include "headroom/base/finetune.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace headroom {

std::string_view toString(Quant q) noexcept
{
    switch (q) {
    case Quant::NF4: return "nf4";
    case Quant::FP4: return "fp4";
    case Quant::Int8: return "int8";
    default: return "none";
    }
}

std::optional<Quant> parseQuant(std::string_view s) noexcept
{
    if (s == "nf4")
        return Quant::NF4;
    if (s == "fp4")
        return Quant::FP4;
    if (s == "int8")
        return Quant::Int8;
    if (s == "none")
        return Quant::None;
    return std::nullopt;
}

namespace {
std::optional<double> number(std::string_view v)
{
    const std::string s(v);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size())
        return std::nullopt;
    return d;
}
} // namespace

std::optional<std::string> parseLoraSpec(std::string_view text, LoraSpec& out)
{
    LoraSpec spec;
    spec.r = 8; // LoraConfig defaults: r=8, lora_alpha=8, lora_dropout=0
    spec.alpha = 8;
    size_t p = 0;
    while (p < text.size()) {
        size_t comma = text.find(',', p);
        std::string_view item = text.substr(p, comma == std::string_view::npos ? std::string_view::npos : comma - p);
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            return "expected KEY=VALUE, got '" + std::string(item) + "'";
        const std::string_view key = item.substr(0, eq), val = item.substr(eq + 1);
        if (key == "targets" || key == "target_parameters") {
            // the rest of the text: names separated by commas; "targets=" and "target_parameters=" switch lists
            std::vector<std::string>* list = key == "targets" ? &spec.targets : &spec.parameters;
            std::string_view rest = text.substr(p + eq + 1);
            size_t q = 0;
            while (q <= rest.size()) {
                size_t c = rest.find(',', q);
                if (c == std::string_view::npos)
                    c = rest.size();
                std::string_view name = rest.substr(q, c - q);
                for (auto [prefix, to] : {std::pair{std::string_view("targets="), &spec.targets},
                                          std::pair{std::string_view("target_parameters="), &spec.parameters}})
                    if (name.starts_with(prefix)) {
                        name.remove_prefix(prefix.size());
                        list = to;
                    }
                if (!name.empty())
                    list->emplace_back(name);
                q = c + 1;
            }
            if (spec.targets.empty() && spec.parameters.empty())
                return std::string("targets= needs module names (q_proj,v_proj) or all-linear");
            if (!spec.parameters.empty() && spec.dropout > 0)
                return std::string("target_parameters cannot take dropout (PEFT's ParamWrapper refuses lora_dropout)");
            break;
        }
        if (key == "dtype") {
            // PEFT >= 0.12 keeps adapters in fp32 (autocast_adapter_dtype=True); 16-bit adapters are
            // autocast_adapter_dtype=False on a 16-bit model, or adapters cast after get_peft_model
            if (val == "fp32" || val == "float32")
                spec.dtype = "fp32";
            else if (val == "bf16" || val == "bfloat16")
                spec.dtype = "bf16";
            else if (val == "fp16" || val == "float16")
                spec.dtype = "fp16";
            else
                return "dtype=" + std::string(val) + ": expected fp32, bf16 or fp16";
        } else if (key == "init_lora_weights" || key == "init") {
            // peft/tuners/lora/config.py: bool or one of these names; only "mica" changes what trains
            static const char* kInits[] = {"true",  "True",  "false", "False", "gaussian",   "eva",
                                           "olora", "pissa", "corda", "loftq", "orthogonal", "mica"};
            bool known = std::string_view(val).starts_with("pissa_niter_");
            for (const char* k : kInits)
                known = known || val == k;
            if (!known)
                return "init_lora_weights=" + std::string(val) +
                       ": expected true, false, gaussian, eva, olora, pissa, pissa_niter_N, corda, loftq, orthogonal "
                       "or mica";
            spec.init = val == "True" ? "true" : val == "False" ? "false" : std::string(val);
        } else if (key == "dora" || key == "use_dora") {
            if (val == "1" || val == "true" || val == "True")
                spec.dora = true;
            else if (val == "0" || val == "false" || val == "False")
                spec.dora = false;
            else
                return std::string(key) + "=" + std::string(val) + ": expected true or false";
        } else if (key == "r" || key == "alpha" || key == "dropout") {
            const auto v = number(val);
            if (!v)
                return "'" + std::string(key) + "' needs a number, got '" + std::string(val) + "'";
            if (key == "r") {
                if (*v < 1 || *v > 65536 || *v != static_cast<int>(*v))
                    return std::string("r must be a positive integer");
                spec.r = static_cast<int>(*v);
            } else if (key == "alpha") {
                spec.alpha = *v;
            } else {
                if (*v < 0 || *v >= 1)
                    return std::string("dropout must lie in [0, 1)");
                spec.dropout = *v;
            }
        } else {
            return "unknown key '" + std::string(key) +
                   "' (r, alpha, dropout, dtype, dora, init_lora_weights, targets)";
        }
        if (comma == std::string_view::npos)
            break;
        p = comma + 1;
    }
    if (spec.dora && spec.init == "mica")
        return std::string("dora cannot take init_lora_weights=mica (PEFT applies one LoRA variant per layer)");
    if (spec.dora && !spec.parameters.empty())
        return std::string("dora cannot take target_parameters (PEFT's ParamWrapper has no DoRA)");
    out = spec;
    return std::nullopt;
}

int loraAdapterBytes(const LoraSpec& spec) noexcept { return spec.dtype == "bf16" || spec.dtype == "fp16" ? 2 : 4; }

std::vector<std::string> loraFreezePatterns(bool dora, bool frozenB)
{
    // MiCA (variants.py MiCALinearVariant.init: _register_frozen_peft_weight(module, adapter_name, "lora_B")):
    // only lora_A trains; DoRA has no MiCA variant (PEFT resolves one variant per layer)
    if (frozenB)
        return {"*", "!*lora_A*"};
    // PEFT's mark_only_lora_as_trainable (bias="none"): every base parameter frozen, every "lora_" one trained:
    // lora_A/lora_B, and DoRA's lora_magnitude_vector
    if (dora)
        return {"*", "!*lora_A*", "!*lora_B*", "!*lora_magnitude_vector*"};
    return {"*", "!*lora_A*", "!*lora_B*"};
}

std::optional<std::string> parseIa3Spec(std::string_view text, LoraSpec& out)
{
    LoraSpec spec;
    spec.method = PeftMethod::IA3;
    if (text == "default") {
        out = spec;
        return std::nullopt;
    }
    size_t p = 0;
    while (p < text.size()) {
        const size_t comma = text.find(',', p);
        const std::string_view item = text.substr(p,
                                                  comma == std::string_view::npos ? std::string_view::npos : comma - p);
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            return "expected default or KEY=VALUE, got '" + std::string(item) + "'";
        const std::string_view key = item.substr(0, eq), val = item.substr(eq + 1);
        if (key == "targets" || key == "feedforward") {
            // the rest of the text: names separated by commas; "targets=" and "feedforward=" switch lists
            std::vector<std::string> ff;
            bool inFf = false, anyFf = false;
            std::string_view rest = text.substr(p);
            size_t q = 0;
            while (q <= rest.size()) {
                size_t c = rest.find(',', q);
                if (c == std::string_view::npos)
                    c = rest.size();
                std::string_view name = rest.substr(q, c - q);
                if (name.starts_with("targets=")) {
                    name.remove_prefix(8);
                    inFf = false;
                } else if (name.starts_with("feedforward=")) {
                    name.remove_prefix(12);
                    inFf = anyFf = true;
                }
                if (!name.empty() && !(inFf && name == "none"))
                    (inFf ? ff : spec.targets).emplace_back(name);
                q = c + 1;
            }
            if (anyFf)
                spec.feedforward = ff;
            if (spec.targets.empty())
                return std::string("targets= needs module names (k_proj,v_proj,down_proj)");
            for (const std::string& f : ff)
                if (std::find(spec.targets.begin(), spec.targets.end(), f) == spec.targets.end())
                    return "feedforward module '" + f + "' is not among the targets (IA3Config: feedforward_modules " +
                           "should be a subset of target_modules)";
            break;
        }
        if (key != "dtype")
            return "unknown key '" + std::string(key) + "' (dtype, targets, feedforward)";
        if (val == "fp32" || val == "float32")
            spec.dtype = "fp32";
        else if (val == "bf16" || val == "bfloat16")
            spec.dtype = "bf16";
        else if (val == "fp16" || val == "float16")
            spec.dtype = "fp16";
        else
            return "dtype=" + std::string(val) + ": expected fp32, bf16 or fp16";
        if (comma == std::string_view::npos)
            break;
        p = comma + 1;
    }
    out = spec;
    return std::nullopt;
}

std::vector<std::string> adapterFreezePatterns(const LoraSpec& spec)
{
    if (spec.method == PeftMethod::IA3)
        return {"*", "!*ia3_l*"}; // IA3Model._mark_only_adapters_as_trainable: the "ia3_" parameters
    return loraFreezePatterns(spec.dora, spec.init == "mica");
}

int64_t quant4bitBytes(int64_t numel, bool doubleQuant) noexcept
{
    if (numel <= 0)
        return 0;
    const int64_t blocks = (numel + 63) / 64; // blocksize 64 (Linear4bit's default)
    const int64_t packed = (numel + 1) / 2;   // two 4-bit codes per byte
    if (!doubleQuant)
        return packed + 4 * blocks;               // fp32 absmax per block
    const int64_t blocks2 = (blocks + 255) / 256; // nested blocksize 256
    return packed + blocks + 4 * blocks2;         // uint8 absmax + fp32 absmax2 per 256 blocks
}

int64_t mxfp4Bytes(int64_t numel) noexcept { return numel <= 0 ? 0 : (numel + 1) / 2 + (numel + 31) / 32; }

int64_t quant8bitBytes(int64_t numel, int64_t rows) noexcept { return numel <= 0 ? 0 : numel + 4 * rows; }

} // namespace headroom
