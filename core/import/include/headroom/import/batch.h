#pragma once
// The global batch of a configuration: the value of the model's batch symbol. Every search over the batch
// (max batch, the cluster fit, the report's sweep, the advisor) and every output that names the batch reads
// and sets it here, so they agree on a model without a batch symbol and on symbols not indexed like the model's.
#include "headroom/base/config.h"
#include "headroom/import/model.h"

#include <cstdint>

namespace headroom {

// The batch `config` sets; 1 when the model has no batch symbol or `config` does not bind it.
inline int64_t batchOf(const Model& model, const Config& config)
{
    const int b = model.batchSymbol;
    return b >= 0 && static_cast<size_t>(b) < config.symbols.size() ? config.symbols[static_cast<size_t>(b)] : 1;
}

// `config` at global batch `batch`. Symbols not indexed like the model's are first reset to its defaults, as
// evaluate() reads them (memory/engine/sizes.cpp, bindingsFor); a model without a batch symbol keeps them as they are.
inline Config withBatch(const Model& model, Config config, int64_t batch)
{
    if (config.symbols.size() != model.symbols.size())
        config.symbols = model.defaultBindings();
    if (model.batchSymbol >= 0)
        config.symbols[static_cast<size_t>(model.batchSymbol)] = batch;
    return config;
}

// Whether `a` and `b` differ at most in the batch, so that a max-batch search gives both the same answer
// (the GUI reuses one across a batch drag). Config's == compares every field: a new one is never left out.
inline bool sameButBatch(const Model& model, const Config& a, const Config& b)
{
    return withBatch(model, a, 0) == withBatch(model, b, 0);
}

} // namespace headroom
