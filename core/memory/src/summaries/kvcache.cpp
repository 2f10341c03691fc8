// KV-cache planning for decoder exports with past key/value inputs: bytes per token per layer, from the
// inputs' own dims and dtype ([batch, kv_heads, past_len, head_dim] in transformers' DynamicCache layout).
#include "headroom/memory/kvcache.h"

#include <cctype>
#include <set>

namespace headroom {
namespace {

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// "past_key_values.3.key" -> 3; -1 when the name is not a cache input.
int cacheLayer(const std::string& name)
{
    const std::string l = lower(name);
    if (l.find("past") == std::string::npos ||
        (l.find("key") == std::string::npos && l.find("value") == std::string::npos))
        return -1;
    for (size_t i = 0; i < l.size(); ++i)
        if (std::isdigit(static_cast<unsigned char>(l[i]))) {
            int v = 0;
            while (i < l.size() && std::isdigit(static_cast<unsigned char>(l[i])) && v < 1000000)
                v = v * 10 + (l[i++] - '0');
            return v;
        }
    return 0; // a single-layer cache named without a number
}

} // namespace

std::optional<KvCache> kvCache(const Model& model)
{
    KvCache kv;
    std::set<int> layers;
    int64_t perToken = 0;
    for (int t : model.inputs) {
        const Tensor& ten = model.tensors[size_t(t)];
        const int layer = cacheLayer(ten.name);
        if (layer < 0)
            continue;
        if (ten.shape.state != TensorShape::State::Exact || bytesOf(ten.dtype) <= 0)
            return std::nullopt;
        // Per token: every dim except the batch and the cached length, which must be the only other symbol.
        int64_t bytes = bytesOf(ten.dtype);
        int past = -1;
        for (const DimExpr& d : ten.shape.dims) {
            if (auto c = d.constantValue()) {
                auto p = checkedMul(bytes, *c);
                if (!p)
                    return std::nullopt;
                bytes = *p;
                continue;
            }
            const uint32_t mask = d.symbolMask();
            if (d.terms().size() != 1 || d.terms()[0].coeff != 1 || __builtin_popcount(mask) != 1)
                return std::nullopt;
            const int sym = __builtin_ctz(mask);
            if (sym == model.batchSymbol)
                continue;
            if (past >= 0 && past != sym)
                return std::nullopt;
            past = sym;
        }
        if (past < 0 || (kv.pastSymbol >= 0 && kv.pastSymbol != past))
            return std::nullopt;
        kv.pastSymbol = past;
        perToken += bytes;
        layers.insert(layer);
        kv.tensors++;
    }
    if (kv.tensors == 0)
        return std::nullopt;
    kv.layers = static_cast<int>(layers.size());
    kv.bytesPerToken = perToken;
    kv.bytesPerTokenPerLayer = perToken / kv.layers;
    return kv;
}

} // namespace headroom
