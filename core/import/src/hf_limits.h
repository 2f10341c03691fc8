#pragma once
// Sizes no real model has, refused while config.json is read, before a graph is built (issue 22 item 7): a
// config.json with num_hidden_layers 10^12 would otherwise spend minutes writing a trillion layers.
#include "headroom/import/hfconfig.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace headroom::detail {

// config.json's positive integer `key`; throws Error("<file>: ...") when it is absent, not a positive integer,
// or above the limit for that kind of size (hf_limits.cpp kLimits).
int64_t needCount(const nlohmann::json& j, const char* key, const std::string& file);
// Throws when `value` of `key` is above its limit.
void checkCount(const char* key, int64_t value, const std::string& file);
// Throws when the architecture's parameter count passes 64 bits or kMaxParams.
void checkTotal(const HfArch& a, const std::string& file);

} // namespace headroom::detail
