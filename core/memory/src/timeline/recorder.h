#pragma once
// The recorder: what the walk writes instead of bytes (timeline_program.h, "how the timeline works").
// Buffers are reference counted without sizes; every allocation, free and saved mark becomes an op of the
// program, and every decision that depends on the binding is answered now and kept as a guard, so a later
// binding can tell whether this program still is the one a walk at its sizes would record.
// Header-only: the walk calls these once or more per unit, and they inline into it as they did before the
// walk was split into files.
#include "timeline/timeline_program.h"

#include <unordered_set>

namespace headroom::timeline {

struct RecBuffer
{
    int refs = 0;
    bool live = false;
    bool saved = false; // holds a saved-for-backward reference
};

class Recorder
{
public:
    Recorder(const SimContext& c, SimProgram& program) : m_c(c), m_p(program) {}

    int alloc(SizeRef size, Category cat, int tensor, int refs)
    {
        m_p.buffers.push_back({size, cat, tensor});
        m_bufs.push_back({refs, true, false});
        const int id = static_cast<int>(m_bufs.size()) - 1;
        m_p.ops.push_back({SimOp::Kind::Alloc, Phase::Forward, false, id});
        ++m_p.events;
        return id;
    }
    void release(int id)
    {
        RecBuffer& b = m_bufs[static_cast<size_t>(id)];
        if (!b.live)
            return;
        b.live = false;
        m_p.ops.push_back({SimOp::Kind::Free, Phase::Forward, b.saved, id});
        b.saved = false;
        ++m_p.events;
    }
    void decref(int id, int n = 1)
    {
        if (id < 0)
            return;
        RecBuffer& b = m_bufs[static_cast<size_t>(id)];
        b.refs -= n;
        if (b.refs <= 0)
            release(id);
    }
    void incref(int id)
    {
        if (id >= 0)
            ++m_bufs[static_cast<size_t>(id)].refs;
    }
    int refs(int id) const { return m_bufs[static_cast<size_t>(id)].refs; }
    void markSaved(int id)
    {
        RecBuffer& b = m_bufs[static_cast<size_t>(id)];
        if (!b.saved && b.live) {
            b.saved = true;
            m_p.ops.push_back({SimOp::Kind::MarkSaved, Phase::Forward, false, id});
        }
    }
    void begin(int node, Phase phase) { m_p.ops.push_back({SimOp::Kind::Begin, phase, false, node}); }
    void end()
    {
        m_p.ops.push_back({SimOp::Kind::End, Phase::Forward, false, -1});
        ++m_p.steps;
    }
    // The buffers nothing freed, and the allocator's view of the program (SimProgram::allocOps).
    void finish()
    {
        for (size_t i = 0; i < m_bufs.size(); ++i)
            if (m_bufs[i].live)
                m_p.liveAtEnd.push_back(static_cast<int>(i));
        if (!m_p.key.events)
            return;
        m_p.allocOps.reserve(m_p.events + m_p.liveAtEnd.size());
        for (const SimOp& op : m_p.ops)
            if (op.kind == SimOp::Kind::Alloc)
                m_p.allocOps.push_back(op.arg);
            else if (op.kind == SimOp::Kind::Free)
                m_p.allocOps.push_back(~op.arg);
        for (int id : m_p.liveAtEnd)
            m_p.allocOps.push_back(~id);
    }

    // Guards: each binding-dependent decision, answered now and recorded.
    bool itemActive(const SavedItem& item)
    {
        if (item.condView < 0)
            return true;
        const bool active = savedItemActive(m_c.plan, m_c.shapes, item);
        if (m_guardedItems.insert(&item).second) {
            m_p.activeItems.push_back(&item);
            m_p.activeAnswers.push_back(active ? 1 : 0);
        }
        return active;
    }
    bool sameNumel(int a, int b)
    {
        const bool same = m_c.sizes.numel[static_cast<size_t>(a)] == m_c.sizes.numel[static_cast<size_t>(b)];
        m_p.sameNumel.emplace_back(a, b);
        m_p.sameNumelAnswers.push_back(same ? 1 : 0);
        return same;
    }
    bool positive(SizeRef ref)
    {
        const bool pos = sizeOf(m_c, ref) > 0;
        m_p.positive.push_back(ref);
        m_p.positiveAnswers.push_back(pos ? 1 : 0);
        return pos;
    }
    bool offloadable(SizeRef ref)
    {
        const bool large = sizeOf(m_c, ref) >= kMinOffloadBytes;
        m_p.offloadable.push_back(ref);
        m_p.offloadableAnswers.push_back(large ? 1 : 0);
        return large;
    }
    void recomputes(int unit) { m_p.recomputed.push_back(unit); }

private:
    const SimContext& m_c;
    SimProgram& m_p;
    std::vector<RecBuffer> m_bufs;
    std::unordered_set<const SavedItem*> m_guardedItems;
};

// Where a buffer's bytes come from (SizeRef), spelled short for the walk.
inline SizeRef act(int t) { return {SizeRef::Kind::Activation, t, nullptr}; }
inline SizeRef item(const SavedItem& it) { return {SizeRef::Kind::Item, -1, &it}; }
inline SizeRef of(SizeRef::Kind k, int index = -1) { return {k, index, nullptr}; }

} // namespace headroom::timeline
