// Activation offloading as torchtune runs it (Config::offloadActivations; docs/DESIGN.md "Activation
// offloading"): torchtune/training/_activation_offloading.py OffloadActivations, a saved_tensors_hooks around the
// model's forward (recipes/lora_finetune_single_device.py and full_finetune_single_device.py: `with
// self.activations_handling_ctx: outputs = self._model(**batch)`; the loss is computed outside it), with the
// recipes' requirement that activation checkpointing is on (both raise RuntimeError otherwise). Under
// checkpointing only the checkpoint inputs reach its pack hook: torch.utils.checkpoint's non-reentrant
// checkpoint (torchtune's training/activations.py checkpoint_wrapper: CheckpointImpl.NO_REENTRANT) saves
// them with `_NoopSaveInputs.apply(dummy, kwargs, *args)` outside its own hooks, and inside the segment its
// _checkpoint_hook is the innermost saved_tensors_hooks (only the innermost runs), as is _recomputation_hook
// during the recomputation in backward; so what the recomputation saves stays on the GPU.
//   forward  pack_tensor: every saved tensor gets an id (the zero-size dummy too); one on the GPU of at least
//            min_offload_size bytes that is no Parameter is copied to pinned host memory, and its GPU original
//            stays referenced in fwd_stash until a later qualifying pack whose id is >= its id +
//            max_fwd_stash_size (then `del self.fwd_stash[id]`).
//   backward unpack_tensor_with_streams: the recomputation unpacks the segment's inputs (the checkpoint's
//            unpack hook reads ctx.saved_tensors). One still in fwd_stash is handed back as it is; any other
//            comes back as a new GPU tensor, kept in bwd_tensor_stash until the post-hook of the next node that
//            unpacks an offloaded tensor (prev_node_ids), i.e. through the next segment's recomputation and
//            first backward node, or to the end of backward (wait_and_del_remaining_references). If the
//            recomputation saved it (its storage's use count grew), it is record_stream'd and dropped from the
//            stash at once: it lives while those saves do. The first such node's hook empties fwd_stash.
// What a checkpoint packs is its positional arguments: the hidden states one decoder layer hands the next
// (torchtune's checkpoint_wrapper calls layer(h, mask=..., input_pos=...), RoPE computed inside the attention from
// its cache; transformers' GradientCheckpointingLayer.__call__ passes hidden_states positionally and binds the
// rest, position_embeddings and attention_mask among them, with functools.partial, so they are not saved). In
// Headroom's segments that is the hold the previous segment's last unit produced (handedOn); side inputs computed once
// before the layers (rotary tables, masks, the token ids of segment 0) are held as before and not offloaded. The units
// that run normally (after the last checkpointed segment) pack what they save too, except the output projection
// (get_act_offloading_ctx_manager wraps model.output in NoOpManager): their packs count as ids and sweep fwd_stash
// (packUnitSaves), which is what sends the last layers' inputs to the host before backward. Their own tensors are kept
// on the GPU here: under per-layer checkpointing they are the final norm's, the last packs of forward, still in
// fwd_stash when backward starts; under --checkpoint K a longer last segment reads high.
#include "timeline/iteration.h"

#include <algorithm>

namespace headroom::timeline {

namespace {

using HoldState = Iteration::HoldState;

// pack_tensor's fwd_stash sweep: the originals packed max_fwd_stash_size ids before `id` or earlier are let go.
void sweepForwardStash(Iteration& w, int id)
{
    auto& stash = w.fwdStash;
    size_t kept = 0;
    for (size_t i = 0; i < stash.size(); ++i) {
        const Iteration::Pack& p = stash[i];
        if (p.id <= id - kMaxFwdStashSize) {
            const int rt = w.holds[static_cast<size_t>(p.seg)][static_cast<size_t>(p.hold)];
            w.rec.decref(w.buf[static_cast<size_t>(rt)]);
            w.holdState[static_cast<size_t>(p.seg)][static_cast<size_t>(p.hold)] = HoldState::Offloaded;
        } else {
            stash[kept++] = p;
        }
    }
    stash.resize(kept);
}

void restoreSwappedHolds(Iteration& w)
{
    for (const auto& [rt, original] : w.swappedHolds)
        w.buf[static_cast<size_t>(rt)] = original;
    w.swappedHolds.clear();
}

} // namespace

// At the first unit of a checkpointed segment: _NoopSaveInputs saves the dummy, then each input.
void packSegmentInputs(Iteration& w, size_t u)
{
    if (!w.opt.offload || !w.checkpointed(u))
        return;
    const size_t seg = static_cast<size_t>(w.opt.segmentOfUnit[u]);
    if (w.unitsOfSeg[seg].empty() || w.unitsOfSeg[seg].front() != static_cast<int>(u))
        return;
    if (w.holdState.empty())
        w.holdState.resize(w.holds.size());
    std::vector<HoldState>& state = w.holdState[seg];
    state.assign(w.holds[seg].size(), HoldState::Kept);
    ++w.packId; // the dummy: torch.empty((0,), requires_grad=True), never offloaded
    for (size_t k = 0; k < w.holds[seg].size(); ++k) {
        if (!handedOn(w.plan, w.opt, w.holds[seg][k], static_cast<int>(seg)))
            continue; // a side input (rotary tables, mask, the token ids): not a checkpoint argument
        ++w.packId;
        if (!w.rec.offloadable(act(w.holds[seg][k])))
            continue;
        sweepForwardStash(w, w.packId);
        w.fwdStash.push_back({w.packId, static_cast<int>(seg), static_cast<int>(k)});
        state[k] = HoldState::Stashed;
    }
}

// A unit that runs normally (after the last checkpointed segment) packs each tensor it saves: ids, and the
// fwd_stash sweep of a qualifying one. Its own tensors stay on the GPU here (see the top of this file); the
// output projection packs nothing (NoOpManager), and what loss.cpp adds runs outside the context.
void packUnitSaves(Iteration& w, size_t u)
{
    if (!w.opt.offload || w.checkpointed(u) || (!w.fusedLoss.empty() && w.fusedLoss[u]))
        return;
    const Unit& unit = w.plan.units[u];
    for (int t : unit.outputs)
        if (w.model.tensors[static_cast<size_t>(t)].isGraphOutput)
            return; // get_act_offloading_ctx_manager: model.output under NoOpManager
    for (const SavedItem& it : unit.saved) {
        if (!w.rec.itemActive(it))
            continue;
        ++w.packId;
        if (w.rec.offloadable(it.kind == SavedItem::Kind::Storage ? act(w.root(it.tensor)) : item(it)))
            sweepForwardStash(w, w.packId);
    }
}

bool holdOffloaded(const Iteration& w, size_t seg, size_t hold)
{
    return w.opt.offload && seg < w.holdState.size() && hold < w.holdState[seg].size() &&
           w.holdState[seg][hold] == HoldState::Offloaded;
}

// The recomputation's unpack: a hold still in fwd_stash is the original; an offloaded one a new copy, which
// stands in for the original while the segment's recomputation and backward run.
void bringBackHolds(Iteration& w, int seg)
{
    if (!w.opt.offload)
        return;
    restoreSwappedHolds(w);
    const size_t s = static_cast<size_t>(seg);
    if (s >= w.holdState.size())
        return;
    for (size_t k = 0; k < w.holdState[s].size(); ++k) {
        const int rt = w.holds[s][k];
        if (w.holdState[s][k] == HoldState::Stashed) {
            std::erase_if(w.fwdStash,
                          [&](const Iteration::Pack& p) { return p.seg == seg && p.hold == static_cast<int>(k); });
            w.holdState[s][k] = HoldState::Kept; // released with the hold at the recomputation's end
        } else if (w.holdState[s][k] == HoldState::Offloaded) {
            const int copy = w.rec.alloc(act(rt), Category::Activations, rt, 1);
            w.swappedHolds.emplace_back(rt, w.buf[static_cast<size_t>(rt)]);
            w.buf[static_cast<size_t>(rt)] = copy;
            w.bwdStash.push_back(copy);
        }
    }
}

// Before the recomputation forgets what it saved: a copy it saved is record_stream'd (released from the stash
// after this first node), the others wait for the next unpacking node.
void keepCopiesAfterRecompute(Iteration& w, int seg)
{
    if (!w.opt.offload || static_cast<size_t>(seg) >= w.holdState.size())
        return;
    std::vector<int> waiting;
    for (int copy : w.bwdStash) {
        bool saved = false;
        for (const auto& [rt, original] : w.swappedHolds)
            if (w.buf[static_cast<size_t>(rt)] == copy && w.ckSaved[static_cast<size_t>(rt)])
                saved = true;
        (saved ? w.releaseAfterUnit : waiting).push_back(copy);
    }
    w.bwdStash = std::move(waiting);
}

// The post-hook of the node whose unpack ran the recomputation: fwd_stash emptied, the previous node's copies
// and the record_stream'd ones let go.
void afterFirstUnpackingUnit(Iteration& w)
{
    if (!w.opt.offload)
        return;
    sweepForwardStash(w, w.packId + kMaxFwdStashSize + 1);
    for (int id : w.prevBwdStash)
        w.rec.decref(id);
    for (int id : w.releaseAfterUnit)
        w.rec.decref(id);
    w.releaseAfterUnit.clear();
    w.prevBwdStash = std::move(w.bwdStash);
    w.bwdStash.clear();
}

// The end of backward (wait_and_del_remaining_references): whatever is still stashed.
void releaseOffloadLeftovers(Iteration& w)
{
    if (!w.opt.offload)
        return;
    for (const std::vector<int>* list : {&w.prevBwdStash, &w.bwdStash, &w.releaseAfterUnit})
        for (int id : *list)
            w.rec.decref(id);
    w.prevBwdStash.clear();
    w.bwdStash.clear();
    w.releaseAfterUnit.clear();
    restoreSwappedHolds(w);
}

} // namespace headroom::timeline

namespace headroom {

bool handedOn(const PlanData& plan, const SimOptions& options, int root, int seg)
{
    const int pr = plan.model->tensors[static_cast<size_t>(root)].producer;
    const int pu = pr >= 0 ? plan.unitOfNode[static_cast<size_t>(pr)] : -1;
    if (seg < 1 || pu < 0 || options.segmentOfUnit[static_cast<size_t>(pu)] != seg - 1)
        return false;
    for (size_t v = static_cast<size_t>(pu) + 1; v < plan.units.size() && options.segmentOfUnit[v] == seg - 1; ++v)
        if (!plan.units[v].isView)
            return false;
    return true;
}

} // namespace headroom
