// Activation checkpointing (torch.utils.checkpoint.checkpoint_sequential): a checkpointed segment keeps only
// its inputs through forward, and runs its forward again at the first backward into it (timeline_program.h,
// "how the timeline works"). The segments themselves are chosen in checkpoint.cpp and layer_checkpoint.cpp.
#include "timeline/iteration.h"

#include <unordered_set>

namespace headroom::timeline {

// Checkpoint holds: the inputs of each checkpointed segment stay until its recomputation.
void holdCheckpointInputs(Iteration& w)
{
    const size_t segs = static_cast<size_t>(w.opt.segments);
    w.holds.assign(segs, {});
    w.unitsOfSeg.assign(segs, {});
    std::unordered_set<int64_t> held; // (segment, storage) pairs already held
    for (size_t u = 0; u < w.nU; ++u) {
        const int seg = w.opt.segmentOfUnit[u];
        if (seg >= 0 && static_cast<size_t>(seg) < segs)
            w.unitsOfSeg[static_cast<size_t>(seg)].push_back(static_cast<int>(u));
        if (!w.checkpointed(u))
            continue;
        for (int t : w.plan.units[u].inputs) {
            if (!w.dynamic(t) || w.inSeg(w.producerUnit(t), seg))
                continue;
            const int rt = w.root(t);
            if (held.insert(static_cast<int64_t>(seg) * static_cast<int64_t>(w.nT) + rt).second) {
                w.holds[static_cast<size_t>(seg)].push_back(rt);
                ++w.refs[static_cast<size_t>(rt)];
            }
        }
    }
}

// checkpoint_sequential: the first backward into a checkpointed segment runs its forward again, with
// the references and saved tensors of a normal forward inside the segment.
void recomputeSegment(Iteration& w, size_t ui)
{
    const int seg = w.opt.segmentOfUnit[ui];
    const std::vector<int>& units = w.unitsOfSeg[static_cast<size_t>(seg)];
    w.recomputed[static_cast<size_t>(seg)] = 1;
    w.rec.begin(w.plan.units[ui].head, Phase::Recompute);
    bringBackHolds(w, seg); // activation offloading: the inputs back from the host (offload.cpp)
    std::vector<int> touched;
    for (int v : units) {
        for (int t : w.plan.units[static_cast<size_t>(v)].inputs) {
            if (!w.dynamic(t))
                continue;
            const int rt = w.root(t);
            if (w.inSeg(w.producerUnit(rt), seg)) {
                ++w.segRefs[static_cast<size_t>(rt)];
                touched.push_back(rt);
            }
        }
        for (const SavedItem& it : w.plan.units[static_cast<size_t>(v)].saved) {
            if (it.kind != SavedItem::Kind::Storage || !w.rec.itemActive(it))
                continue;
            const int rt = w.root(it.tensor);
            if (w.ckSaved[static_cast<size_t>(rt)])
                continue;
            w.ckSaved[static_cast<size_t>(rt)] = 1;
            w.releaseAtCk[static_cast<size_t>(v)].push_back(rt);
            touched.push_back(rt);
            if (!w.inSeg(w.producerUnit(rt), seg)) { // a held input the segment saves
                w.rec.incref(w.buf[static_cast<size_t>(rt)]);
                w.rec.markSaved(w.buf[static_cast<size_t>(rt)]);
            }
        }
    }
    for (int v : units) {
        forwardUnit(w, static_cast<size_t>(v), true, seg);
        w.rec.recomputes(v);
    }
    keepCopiesAfterRecompute(w, seg);
    for (int rt : touched) {
        w.segRefs[static_cast<size_t>(rt)] = 0;
        w.ckSaved[static_cast<size_t>(rt)] = 0;
    }
    const std::vector<int>& holds = w.holds[static_cast<size_t>(seg)];
    for (size_t k = 0; k < holds.size(); ++k)
        if (!holdOffloaded(w, static_cast<size_t>(seg), k)) // an offloaded one's copy: offload.cpp releases it
            w.rec.decref(w.buf[static_cast<size_t>(holds[k])]);
    w.rec.end();
}

} // namespace headroom::timeline
