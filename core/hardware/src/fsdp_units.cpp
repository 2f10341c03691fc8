// FSDP's units and the memory FSDP1 keeps outside the shards (torch/distributed/fsdp, PyTorch 2.2-2.5):
//  - units: Hugging Face stacks wrap each decoder layer (accelerate's TRANSFORMER_BASED_WRAP on the model's
//    _no_split_modules, Answer.AI fsdp_qlora train.py's transformer_auto_wrap_policy on LlamaDecoderLayer) and
//    each trainable leaf on its own (PEFT's fsdp_auto_wrap_policy, train.py's lambda_policy_fn: with
//    use_orig_params=False a FlatParameter is all trainable or all frozen); what is left, embedding, final
//    norm and lm_head, is the root unit.
//  - all-gather outputs: FlatParamHandle._alloc_padded_unsharded_flat_param runs in _runtime_utils._unshard
//    under state._unshard_stream, so the unsharded parameters come from that stream's pool; the caching
//    allocator never hands a block to another stream (CUDACachingAllocator.cpp get_free_block: a block of
//    another stream is no fit), so they cannot reuse the default stream's cache, nor it theirs.
//    _free_unsharded_flat_param record_stream()s the block on the compute stream before freeing it, so it
//    goes back to the pool only once the GPU is past it; limit_all_gathers' _FreeEventQueue
//    (_limiter_utils.py) lets the CPU run two all-gathers ahead of those frees. In backward, BACKWARD_PRE
//    prefetch holds the layer being computed and the next one while the last one's free is pending: three
//    layers' blocks in the pool. The root unit is not resharded after forward (_post_forward_reshard:
//    free_unsharded_flat_param is false for the root), so it stays gathered until the end of backward.
//  - init: FSDP's __init__ moves each unit's parameters to the GPU (_init_utils._move_module_to_device),
//    flattens them into a new tensor (FlatParamHandle.flatten_tensors_into_flat_param: torch.cat) and
//    replaces them by views, then clones its own chunk (FlatParamHandle.shard / _get_shard) and frees the
//    unsharded one (_free_storage): the moved parameters and the flat tensor stay cached in the default pool.
//    A run that resets the peak statistics after wrapping (reset_peak_memory_stats keeps the reserved bytes
//    as the new peak) still counts them.
//  - CPU offload: the sharded gradients are still made on the GPU, on the post-backward stream, and kept there
//    until the end of backward (fsdpSidePoolsReserved); only then does the optimizer see the host copies.
//  - NCCL's own buffers are cudaMalloc'ed by NCCL at communicator init, outside the caching allocator: no
//    reserved bytes.
//  - 4-bit weights (bitsandbytes Params4bit, bnb 0.43 as Answer.AI's fsdp_qlora requires: bnb/nn/modules.py,
//    bnb/functional.py). quantize_4bit returns the packed codes, (numel + 1) / 2 bytes in quant_storage's dtype
//    (Answer.AI sets it to the FSDP param dtype so that one flat parameter holds them), and a QuantState: an
//    fp32 absmax per 64 values, or with compress_statistics (double quant) quantize_blockwise's uint8 absmax
//    plus an fp32 absmax per 256 of those, the absmax.mean() offset and the 256-entry dynamic code. Only the
//    packed tensor is the Parameter: FSDP flattens, broadcasts, shards and all-gathers it alone; the QuantState
//    is an attribute (Linear4bit.quant_state, fix_4bit_weight_quant_state_from_module puts it back on the
//    unsharded view in forward), so each rank keeps all of it. Its place in the init: Answer.AI's train.py
//    (4cd6923, fsdp_main, low_memory) quantizes each weight on the GPU in load_and_quantize (Params4bit.cuda ->
//    _quantize), moves the packed codes to the CPU (rank 0) or meta and calls torch.cuda.empty_cache(); PEFT's
//    LoraLayer.update_layer then self.to(weight.device, dtype=weight.dtype) on the CPU base layer
//    (peft/tuners/lora/layer.py, 0.8-0.10), whose Params4bit.to runs QuantState.to('cpu'). FSDP's
//    _move_states_to_device brings each one back with param.to(device): Params4bit.to (bnb_quantized) runs
//    QuantState.to(device) first (absmax, offset, state2.absmax, state2.code: new GPU tensors, the CPU copy of
//    the shared dynamic code included), then copies the packed codes. So in the init each 4-bit weight's
//    quantization state is allocated, kept, in the small pool just before its packed codes are moved. What the
//    loading itself left after empty_cache (small segments that held the same quantization state: replayed
//    for Llama-2-7B with 1 to 32 interleaved loader threads, 0.10-0.11 GiB of segments for 0.096 GiB of state)
//    is reused by those allocations and is not replayed. (Non-quantized runs keep none of this.)
#include "fsdp_units.h"

#include "headroom/memory/allocator.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace headroom {
namespace {

// "layers.12" -> 12; -1 when the name is not "<list>.<int>" with a Hugging Face decoder-list name.
int decoderIndex(const std::string& name)
{
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 >= name.size())
        return -1;
    const std::string list = name.substr(0, dot);
    // Hugging Face names its decoder-layer lists layers (Llama & co.), h (GPT-2), layer (BERT), blocks
    if (list != "layers" && list != "h" && list != "layer" && list != "blocks")
        return -1;
    int v = 0;
    for (size_t i = dot + 1; i < name.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(name[i])) || v > 1'000'000)
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

// The layer-tree node holding the decoder layers: the one with the most "<list>.<int>" children.
int decoderContainer(const Model& m)
{
    int container = -1;
    size_t most = 1;
    for (size_t l = 0; l < m.layers.size(); ++l) {
        size_t n = 0;
        for (int c : m.layers[l].children)
            n += decoderIndex(m.layers[size_t(c)].name) >= 0 ? 1 : 0;
        if (n > most) {
            most = n;
            container = int(l);
        }
    }
    return container;
}

// The decoder layer a parameter belongs to (its first consumer's layer), -1 for the root unit.
int unitOf(const Model& m, int container, int tensor)
{
    const auto& consumers = m.tensors[size_t(tensor)].consumers;
    if (consumers.empty())
        return -1;
    int layer = m.nodes[size_t(consumers.front())].layer;
    while (layer > 0 && size_t(layer) < m.layers.size()) {
        const LayerNode& ln = m.layers[size_t(layer)];
        if (ln.parent == container) // a decoder layer, or the embedding / final norm beside them (root)
            return decoderIndex(ln.name) >= 0 ? layer : -1;
        layer = ln.parent;
    }
    return -1;
}

// A Params4bit's QuantState as QuantState.to(device) allocates it, in that order (bnb/functional.py 0.43,
// quantize_4bit / quantize_blockwise / QuantState.to). QuantState.code (the 16-value 4-bit type) stays where
// get_4bit_type made it and is not moved.
std::vector<int64_t> quantStatePieces(int64_t numel, bool doubleQuant)
{
    const int64_t blocks = (numel + 63) / 64; // Linear4bit's blocksize 64
    if (!doubleQuant)
        return {4 * blocks};                  // fp32 absmax
    constexpr int64_t kDynamicCode = 256 * 4; // create_dynamic_map(): 256 fp32 values
    // uint8 absmax, the fp32 offset, state2's fp32 absmax per 256 blocks, state2's code
    return {blocks, 4, 4 * ((blocks + 255) / 256), kDynamicCode};
}

} // namespace

FsdpUnits fsdpUnits(const Model& model, const Evaluation& ev, const std::vector<uint8_t>& fourBit, bool doubleQuant,
                    bool origParams)
{
    FsdpUnits u;
    const int container = decoderContainer(model);
    if (container < 0 || ev.events.empty())
        return u;
    const int setupStep = ev.events.front().step;
    std::set<int> trainable;
    for (const auto& e : ev.events)
        if (e.kind == AllocEvent::Kind::Alloc && e.category == Category::Gradients && e.tensor >= 0)
            trainable.insert(e.tensor);
    struct Unit
    {
        int64_t bytes = 0, frozen = 0, grad = 0;
        std::vector<int64_t> trainableParts;
        std::vector<InitParam> params;
    };
    std::map<int, Unit> units;
    std::vector<InitParam> rootParams;
    Unit rootUnit; // its trainable parts (the root's parameters are in rootParams)
    for (const auto& e : ev.events) {
        if (e.kind != AllocEvent::Kind::Alloc || e.step != setupStep || e.category != Category::Weights ||
            e.tensor < 0 || size_t(e.tensor) >= model.tensors.size() ||
            model.tensors[size_t(e.tensor)].role != TensorRole::Parameter)
            continue;
        InitParam p{e.bytes, e.bytes, {}};
        const auto t = size_t(e.tensor);
        if (t < fourBit.size() && fourBit[t] && t < ev.shapes.numel.size() && ev.shapes.numel[t] > 0) {
            p.bytes = (ev.shapes.numel[t] + 1) / 2; // the packed codes: the Parameter FSDP flattens
            p.quantState = quantStatePieces(ev.shapes.numel[t], doubleQuant);
            for (int64_t b : p.quantState)
                u.quantState += b;
        }
        const int unit = unitOf(model, container, e.tensor);
        if (unit < 0) {
            u.root += p.bytes;
            rootParams.push_back(p);
            if (trainable.count(e.tensor))
                rootUnit.trainableParts.push_back(p.bytes);
            else
                rootUnit.frozen += p.bytes;
            continue;
        }
        Unit& x = units[unit];
        x.bytes += p.bytes;
        x.params.push_back(p);
        if (trainable.count(e.tensor)) {
            x.grad += p.bytes;
            x.trainableParts.push_back(p.bytes);
        } else {
            x.frozen += p.bytes;
        }
    }
    if (units.empty())
        return u;
    u.found = true;
    u.layers = int64_t(units.size());
    const Unit* largest = nullptr;
    for (const auto& [index, x] : units)
        if (!largest || x.bytes > largest->bytes)
            largest = &x;
    u.layer = largest->bytes;
    // A layer whose parameters are all trainable is one FlatParameter; a mixed one is the frozen flat
    // parameter plus one unit per trainable leaf, or with use_orig_params=True one FlatParameter whose gradient
    // is the whole layer's (FlatParamHandle: one flat_param.grad for every view).
    const bool mixed = largest->frozen > 0 && largest->grad > 0 && !origParams;
    if (mixed) {
        u.layerBlocks.push_back(largest->frozen);
        u.layerBlocks.insert(u.layerBlocks.end(), largest->trainableParts.begin(), largest->trainableParts.end());
    } else {
        u.layerBlocks.push_back(largest->bytes);
    }
    // The trainable flat parameters: a unit with frozen parameters wraps each trainable leaf alone, an
    // all-trainable one is a single FlatParameter.
    const auto addGradParams = [&](const Unit& x) {
        int64_t all = 0;
        for (int64_t b : x.trainableParts)
            all += b;
        if (origParams && all > 0) {
            u.gradParams.push_back(all + x.frozen); // the whole unit's FlatParameter
            u.mixedFrozen += x.frozen;
        } else if (x.frozen > 0) {
            u.gradParams.insert(u.gradParams.end(), x.trainableParts.begin(), x.trainableParts.end());
        } else if (all > 0) {
            u.gradParams.push_back(all);
        }
    };
    for (const auto& [index, x] : units)
        addGradParams(x);
    addGradParams(rootUnit);
    for (const auto& [index, x] : units) {
        u.layerGrad = std::max(u.layerGrad, origParams && x.grad > 0 ? x.bytes : x.grad);
        u.unitParams.push_back(x.params);
    }
    if (!rootParams.empty())
        u.unitParams.push_back(rootParams);
    return u;
}

int64_t fsdpSidePoolsReserved(const FsdpUnits& u, AllocatorMode mode, int gpus, bool offload, bool gradShards)
{
    if (!u.found || mode == AllocatorMode::Exact)
        return 0;
    constexpr int kLayersInPool = 3; // computed + prefetched + one whose free is pending (see above)
    const auto shard = [&](int64_t b) { return (b + gpus - 1) / std::max(gpus, 1); };
    int64_t reserved = 0;
    // The unshard stream's all-gather outputs; with offload, FlatParamHandle.pre_unshard's flat_param_to()
    // copies each shard in on the pre-unshard stream first (record_stream()ed to the unshard stream).
    for (bool copies : {false, true}) {
        if (copies && !offload)
            continue;
        CachingAllocatorModel pool(mode);
        pool.allocate(copies ? shard(u.root) : u.root);
        for (int i = 0; i < kLayersInPool && i < u.layers; ++i)
            for (int64_t b : u.layerBlocks)
                pool.allocate(copies ? shard(b) : b);
        reserved += pool.reserved();
    }
    // Every trainable flat parameter's sharded gradient is a block of the post-backward stream's pool (PyTorch
    // 2.2 _runtime_utils: _post_backward_hook allocates new_sharded_grad in _get_reduce_scatter_tensors under
    // state._post_backward_stream; _accumulate_sharded_grad keeps it as flat_param._saved_grad_shard). With
    // offload _offload_grad only copies it into _cpu_grad and _flat_param.py prepare_gradient_for_optim, run by
    // _post_backward_final_callback, deletes it at the end of backward; without, prepare_gradient_for_optim
    // makes that same block flat_param.grad, which the optimizer step reads and zero_grad frees. Either way all
    // of them are in that pool by the end of backward, freed there and reused by the next step's
    // reduce-scatters: the default pool never gets them back.
    if (gradShards && !u.gradParams.empty()) {
        CachingAllocatorModel pool(mode);
        for (int64_t b : u.gradParams)
            pool.allocate(shard(b));
        reserved += pool.reserved();
    }
    return reserved;
}

std::vector<InitOp> fsdpInitOps(const FsdpUnits& u, int gpus, bool offload, bool sharded)
{
    // _sync_module_params_and_buffers (sync_module_states=True, as Answer.AI's low_memory loading and
    // accelerate's cpu_ram_efficient_loading set it) broadcasts through c10d broadcast_coalesced
    // (torch/csrc/distributed/c10d/comm.cpp): buckets closed once they reach PARAM_BROADCAST_BUCKET_SIZE
    // (250 MiB), each flattened into a new tensor, at most two in flight.
    constexpr int64_t kBucket = int64_t(250) << 20;
    std::vector<InitOp> ops;
    int next = 0;
    auto alloc = [&](int64_t bytes, bool kept = false) {
        ops.push_back({true, next, bytes, kept});
        return next++;
    };
    auto release = [&](int slot) { ops.push_back({false, slot, 0, false}); };
    for (const std::vector<InitParam>& params : u.unitParams) {
        std::vector<int> moved;
        int64_t total = 0;
        for (const InitParam& p : params) {
            for (int64_t q : p.quantState)
                alloc(q, true);              // Params4bit.to -> QuantState.to(device), kept on every rank (see above)
            moved.push_back(alloc(p.bytes)); // _move_module_to_device
            total += p.bytes;
        }
        std::vector<int> inFlight;
        int64_t bucket = 0;
        for (size_t i = 0; i < params.size(); ++i) {
            bucket += params[i].bytes;
            if (bucket < kBucket && i + 1 < params.size())
                continue;
            if (inFlight.size() >= 2) {
                release(inFlight.front());
                inFlight.erase(inFlight.begin());
            }
            inFlight.push_back(alloc(bucket));
            bucket = 0;
        }
        for (int s : inFlight)
            release(s);
        const int flat = alloc(total, !sharded); // flatten_tensors_into_flat_param
        for (int s : moved)
            release(s); // the parameters become views into the flat one
        if (!sharded)
            continue; // NO_SHARD: FlatParamHandle.shard() keeps the flat parameter as the local shard
        const int shard = alloc((total + gpus - 1) / std::max(gpus, 1), !offload); // _get_shard's clone
        if (offload)
            release(shard); // the shard moves to the CPU
        release(flat);      // _free_storage of the unsharded flat parameter
    }
    return ops;
}

} // namespace headroom
