// Who holds each storage, and until when: the references the forward walk counts down (timeline_program.h,
// "how the timeline works"). Buffers are reference counted the way PyTorch's storages are: a storage lives
// while a later forward consumer, a saving backward node, a checkpoint or a gradient slot still holds it.
#include "timeline/iteration.h"

namespace headroom::timeline {

// Runtime storage roots: the plan's views, plus Dropout at inference and inplace activations.
void resolveRuntimeStorage(Iteration& w)
{
    w.rootRT = w.plan.root;
    w.aliasUnit.assign(w.nU, 0);
    std::vector<int> savedByCount(w.nT, 0);
    if (w.train)
        for (size_t u = 0; u < w.nU; ++u)
            for (const SavedItem& it : w.plan.units[u].saved)
                if (it.kind == SavedItem::Kind::Storage)
                    ++savedByCount[static_cast<size_t>(it.tensor)];
    for (size_t u = 0; u < w.nU; ++u) {
        const Unit& unit = w.plan.units[u];
        const Node& nd = w.model.nodes[static_cast<size_t>(unit.head)];
        const int x = nd.inputs.empty() ? -1 : nd.inputs[0];
        bool alias = unit.isView || (!w.train && unit.viewInInference);
        if (!alias && w.opt.inplace && unit.inplaceable && x >= 0 && w.dynamic(x)) {
            const Tensor& xt = w.model.tensors[static_cast<size_t>(x)];
            const int xr = w.plan.root[static_cast<size_t>(x)];
            const bool selfSavedElsewhere = savedByCount[static_cast<size_t>(xr)] > (unit.inplaceSavesResult ? 1 : 0);
            alias = xt.role != TensorRole::Input && !xt.isGraphOutput && xr == x &&
                    w.plan.consumerUnits[static_cast<size_t>(x)].size() == 1 && !selfSavedElsewhere;
        }
        if (alias && x >= 0 && w.dynamic(x)) {
            w.aliasUnit[u] = 1;
            for (int t : unit.outputs)
                w.rootRT[static_cast<size_t>(t)] = w.root(x);
        }
    }
    // rootRT must be transitive: views of views resolved in order already (plan.root is), inplace aliases
    // of views resolved because units are in order.
    for (size_t u = 0; u < w.nU; ++u)
        for (int t : w.plan.units[u].outputs)
            w.rootRT[static_cast<size_t>(t)] = w.root(w.root(t));
}

void countForwardReferences(Iteration& w)
{
    w.refs.assign(w.nT, 0);
    for (size_t t = 0; t < w.nT; ++t)
        if (w.plan.dynamic[t])
            w.refs[static_cast<size_t>(w.rootRT[t])] += static_cast<int>(w.plan.consumerUnits[t].size());
    for (int t : w.model.outputs)
        if (t >= 0 && w.dynamic(t))
            ++w.refs[static_cast<size_t>(w.root(t))];
    w.firstSaver.assign(w.nT, -1);
    w.releaseAt.assign(w.nU, {});
}

// Saved storages: one reference each, released at the backward of the earliest saver.
void assignSavedReleases(Iteration& w)
{
    for (size_t u = 0; u < w.nU; ++u) {
        if (w.checkpointed(u) || (!w.fusedLoss.empty() && w.fusedLoss[u]))
            continue; // Liger's function saves none of the lm_head's tensors (loss.cpp)
        for (const SavedItem& it : w.plan.units[u].saved) {
            if (it.kind != SavedItem::Kind::Storage || !w.rec.itemActive(it))
                continue;
            const size_t rt = static_cast<size_t>(w.root(it.tensor));
            if (w.firstSaver[rt] < 0) {
                w.firstSaver[rt] = static_cast<int>(u);
                ++w.refs[rt];
            }
        }
    }
    for (size_t t = 0; t < w.nT; ++t)
        if (w.firstSaver[t] >= 0)
            w.releaseAt[static_cast<size_t>(w.firstSaver[t])].push_back(static_cast<int>(t));
}

} // namespace headroom::timeline
