#include "headroom/base/config.h"

#include <array>
#include <utility>

namespace headroom {
namespace {

template <typename E, size_t N>
std::string_view nameIn(const std::array<std::pair<E, std::string_view>, N>& table, E v) noexcept
{
    for (const auto& [e, n] : table)
        if (e == v)
            return n;
    return "?";
}

template <typename E, size_t N>
std::optional<E> parseIn(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) noexcept
{
    for (const auto& [e, n] : table)
        if (n == s)
            return e;
    return std::nullopt;
}

constexpr std::array<std::pair<Mode, std::string_view>, 2> kModes{{{Mode::Train, "train"}, {Mode::Infer, "infer"}}};
constexpr std::array<std::pair<DtypePolicy, std::string_view>, 9> kDtypes{{{DtypePolicy::FP32, "fp32"},
                                                                           {DtypePolicy::FP16, "fp16"},
                                                                           {DtypePolicy::BF16, "bf16"},
                                                                           {DtypePolicy::AmpFP16, "amp-fp16"},
                                                                           {DtypePolicy::AmpBF16, "amp-bf16"},
                                                                           {DtypePolicy::MixedFP16, "mixed-fp16"},
                                                                           {DtypePolicy::MixedBF16, "mixed-bf16"},
                                                                           {DtypePolicy::INT8, "int8"},
                                                                           {DtypePolicy::INT4, "int4"}}};
constexpr std::array<std::pair<Optimizer, std::string_view>, 14> kOptimizers{
    {{Optimizer::SGD, "sgd"},
     {Optimizer::Momentum, "momentum"},
     {Optimizer::Adam, "adam"},
     {Optimizer::AdamW, "adamw"},
     {Optimizer::Adagrad, "adagrad"},
     {Optimizer::RMSprop, "rmsprop"},
     {Optimizer::Adadelta, "adadelta"},
     {Optimizer::Lion, "lion"},
     {Optimizer::LAMB, "lamb"},
     {Optimizer::Adam8bit, "adam8bit"},
     {Optimizer::Adafactor, "adafactor"},
     {Optimizer::Custom, "custom"},
     {Optimizer::PagedAdamW, "paged-adamw"},
     {Optimizer::PagedAdamW8bit, "paged-adamw8bit"}}};
constexpr std::array<std::pair<Loss, std::string_view>, 5> kLosses{{{Loss::CrossEntropy, "ce"},
                                                                    {Loss::MSE, "mse"},
                                                                    {Loss::None, "none"},
                                                                    {Loss::ChunkedCE, "chunked-ce"},
                                                                    {Loss::FusedLinearCE, "fused-linear-ce"}}};
constexpr std::array<std::pair<Strategy, std::string_view>, 9> kStrategies{{{Strategy::Single, "single"},
                                                                            {Strategy::DDP, "ddp"},
                                                                            {Strategy::DP, "dp"},
                                                                            {Strategy::BalancedDP, "balanced-dp"},
                                                                            {Strategy::ZeRO1, "zero1"},
                                                                            {Strategy::ZeRO2, "zero2"},
                                                                            {Strategy::ZeRO3, "zero3"},
                                                                            {Strategy::FSDP, "fsdp"},
                                                                            {Strategy::FSDPNoShard, "fsdp-no-shard"}}};
constexpr std::array<std::pair<AllocatorMode, std::string_view>, 3> kAllocators{
    {{AllocatorMode::Exact, "exact"}, {AllocatorMode::Caching, "caching"}, {AllocatorMode::Expandable, "expandable"}}};
// The first name of each is the printed one (config.h: "fused" and "math" stay the printed names of SDPA and
// eager); the later rows are the spellings Hugging Face's attn_implementation uses, accepted as input.
constexpr std::array<std::pair<Attention, std::string_view>, 6> kAttention{{{Attention::Fused, "fused"},
                                                                            {Attention::Math, "math"},
                                                                            {Attention::Flash2, "flash2"},
                                                                            {Attention::Flex, "flex"},
                                                                            {Attention::SDPA, "sdpa"},
                                                                            {Attention::Eager, "eager"}}};
constexpr std::array<std::pair<Device, std::string_view>, 2> kDevices{{{Device::CUDA, "cuda"}, {Device::CPU, "cpu"}}};
constexpr std::array<std::pair<TorchVersion, std::string_view>, 2> kTorch{
    {{TorchVersion::V2, "2"}, {TorchVersion::V1_13, "1.13"}}};

} // namespace

std::string_view toString(Mode v) noexcept { return nameIn(kModes, v); }
std::string_view toString(DtypePolicy v) noexcept { return nameIn(kDtypes, v); }
std::string_view toString(Optimizer v) noexcept { return nameIn(kOptimizers, v); }
std::string_view toString(Loss v) noexcept { return nameIn(kLosses, v); }
std::string_view toString(Strategy v) noexcept { return nameIn(kStrategies, v); }
std::string_view toString(AllocatorMode v) noexcept { return nameIn(kAllocators, v); }
std::optional<Mode> parseMode(std::string_view s) noexcept { return parseIn(kModes, s); }
std::optional<DtypePolicy> parseDtype(std::string_view s) noexcept { return parseIn(kDtypes, s); }
std::optional<Optimizer> parseOptimizer(std::string_view s) noexcept { return parseIn(kOptimizers, s); }
std::optional<Loss> parseLoss(std::string_view s) noexcept { return parseIn(kLosses, s); }
std::optional<Strategy> parseStrategy(std::string_view s) noexcept { return parseIn(kStrategies, s); }
std::optional<AllocatorMode> parseAllocator(std::string_view s) noexcept { return parseIn(kAllocators, s); }
std::string_view toString(Attention v) noexcept { return nameIn(kAttention, v); }
std::string_view toString(Device v) noexcept { return nameIn(kDevices, v); }
std::optional<Attention> parseAttention(std::string_view s) noexcept { return parseIn(kAttention, s); }
std::optional<Device> parseDevice(std::string_view s) noexcept { return parseIn(kDevices, s); }
std::string_view toString(TorchVersion v) noexcept { return nameIn(kTorch, v); }
std::optional<TorchVersion> parseTorchVersion(std::string_view s) noexcept { return parseIn(kTorch, s); }

} // namespace headroom
