#pragma once
// FSDP's units as the Hugging Face stacks wrap a decoder model, and what FSDP (FSDP1,
// torch/distributed/fsdp) holds for them besides the shards (docs/DESIGN.md "Multi-GPU").
#include "headroom/memory/engine.h"

#include <cstdint>
#include <vector>

namespace headroom {

// One parameter as FSDP's init moves it: the bytes that go into the flat parameter, and for a bitsandbytes
// Params4bit the quantization state moved to the GPU before it (fsdp_units.cpp), which stays outside the flat
// parameter, whole on every rank.
struct InitParam
{
    int64_t bytes = 0;
    int64_t stored = 0; // the setup event's bytes (a 4-bit weight: packed codes + quantization state)
    std::vector<int64_t> quantState;
};

struct FsdpUnits
{
    bool found = false; // the model has a decoder-layer list to wrap
    int64_t layers = 0; // decoder layers (units besides the root)
    // The root unit: every parameter outside the decoder layers (embedding, final norm, lm_head).
    int64_t root = 0;
    // The largest decoder layer: all its parameter bytes (what its all-gather outputs add up to), its
    // trainable bytes (its unsharded gradient), the all-gather outputs one by one (the frozen flat parameter,
    // then one per trainable parameter: PEFT's and Answer.AI's policies wrap each trainable leaf alone) and
    // its parameters one by one (the tensors FSDP's init moves to the GPU before it flattens them).
    int64_t layer = 0;
    int64_t layerGrad = 0;
    std::vector<int64_t> layerBlocks;
    // Every unit's parameters in the order FSDP's init wraps them: the decoder layers, then the root.
    std::vector<std::vector<InitParam>> unitParams;
    int64_t quantState = 0; // all 4-bit weights' quantization state: on every rank, never sharded
    // Every trainable FlatParameter's bytes (a mixed unit's trainable leaves one by one, an all-trainable
    // unit whole), decoder layers then the root: what the post-backward stream's sharded gradients size.
    std::vector<int64_t> gradParams;
    // With use_orig_params=True (Config::fsdpOrigParams): the frozen bytes of the units that have trainable ones,
    // which their one FlatParameter's gradient covers as well.
    int64_t mixedFrozen = 0;
};

// The units from the setup step's weight events. fourBit flags the Params4bit weights (fourBitWeights(), empty
// when none): their flat-parameter bytes are the packed codes, their quantization state apart.
// origParams: use_orig_params=True, one FlatParameter per unit whatever its parameters' requires_grad.
FsdpUnits fsdpUnits(const Model& model, const Evaluation& ev, const std::vector<uint8_t>& fourBit = {},
                    bool doubleQuant = false, bool origParams = false);

// Bytes the side streams' pools reserve (FSDP1's all-gather outputs on the unshard stream; with CPU offload
// also the shards copied in on the pre-unshard stream; with gradShards every trainable flat parameter's sharded
// gradient on the post-backward stream), for the caching allocator modes.
int64_t fsdpSidePoolsReserved(const FsdpUnits& u, AllocatorMode mode, int gpus, bool offload, bool gradShards);

// FSDP's init in the default stream's pool, unit by unit: slot `slot` allocates `bytes` (alloc) or is freed;
// `kept` marks the shards and the 4-bit weights' quantization state, which stay (the rest only leaves cache
// behind).
struct InitOp
{
    bool alloc = true;
    int slot = 0;
    int64_t bytes = 0;
    bool kept = false;
};
// NO_SHARD (sharded false): the flat parameter itself is kept, no shard is cloned.
std::vector<InitOp> fsdpInitOps(const FsdpUnits& u, int gpus, bool offload, bool sharded = true);

} // namespace headroom
