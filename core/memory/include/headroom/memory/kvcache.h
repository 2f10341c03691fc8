#pragma once
// Decoder exports made for generation take the past keys and values as inputs (Hugging Face / Optimum:
// "past_key_values.3.key", "past_key_values.3.value"; older: "past_key_3", "past.3.value"): the KV cache that
// inference keeps grows by a fixed number of bytes per generated token, per layer.
#include "headroom/import/model.h"

#include <optional>

namespace headroom {

struct KvCache
{
    int layers = 0;                    // distinct layer numbers among the cache inputs
    int tensors = 0;                   // cache inputs (a key and a value per layer)
    int pastSymbol = -1;               // the symbol of the cached length ("past_sequence_length")
    int64_t bytesPerTokenPerLayer = 0; // one sequence (batch 1), keys + values, at the inputs' dtype
    int64_t bytesPerToken = 0;         // all layers
};

// std::nullopt when the model takes no past keys/values, or their size per token cannot be told (a dim
// other than batch and the cached length that is symbolic, or an unknown dtype).
std::optional<KvCache> kvCache(const Model& model);

} // namespace headroom
