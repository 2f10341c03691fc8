// A recorded iteration (timeline_program.h) at one binding: the buffers re-sized, the op array replayed into
// the timeline, the allocation events and the peak with its culprits. This is all a slider tick runs of the
// simulation; the walk itself (timeline.cpp) runs once per plan and switch setting.
#include "timeline/timeline_program.h"

#include "headroom/memory/allocator.h"

#include <algorithm>
#include <array>

namespace headroom {

int64_t spanElements(const std::vector<DimExpr>& dims, int begin, int end, const Bindings& values)
{
    int64_t elems = 1;
    for (int d = begin; d < end && static_cast<size_t>(d) < dims.size(); ++d) {
        auto v = dims[static_cast<size_t>(d)].eval(values);
        elems = checkedMul(elems, v ? std::max<int64_t>(*v, 0) : 0).value_or(0);
    }
    return elems;
}

namespace {

constexpr size_t kCats = static_cast<size_t>(Category::Count);

int64_t itemBytesImpl(const PlanData& plan, const Config& /*config*/, const ShapeTable& shapes, const Sizes& sizes,
                      const SavedItem& s)
{
    if (s.tensor < 0)
        return 0;
    const size_t t = static_cast<size_t>(s.tensor);
    if (s.kind == SavedItem::Kind::Storage)
        return sizes.act[t];
    if (s.kind == SavedItem::Kind::Copy) // num copies (one per RNN direction)
        return checkedMul(sizes.act[t], s.num).value_or(0) / std::max<int64_t>(s.den, 1);
    int64_t elems = 0;
    if (s.span >= 0 && static_cast<size_t>(s.span) < sizes.spanElems.size()) {
        elems = sizes.spanElems[static_cast<size_t>(s.span)]; // an exact shape's span, evaluated once per tick
    } else if (s.dimBegin >= 0) {
        elems = spanElements(plan.model->tensors[t].shape.dims, s.dimBegin, s.dimEnd, shapes.values);
        if (plan.model->tensors[t].shape.state != TensorShape::State::Exact) {
            // dims are not fitted: fall back to the element count (overestimates stats, never underestimates)
            elems = std::max<int64_t>(sizes.numel[t], 0);
        }
    } else {
        elems = std::max<int64_t>(sizes.numel[t], 0);
    }
    elems = checkedMul(elems, s.num).value_or(0) / std::max<int64_t>(s.den, 1);
    int64_t elem = s.elemBytes;
    if (elem == 0) {
        const int64_t n = std::max<int64_t>(sizes.numel[t], 1);
        elem = std::max<int64_t>(1, sizes.act[t] / n);
    } else if (!s.fp32Stat && s.elemBytes == 4) {
        elem = 4;
    }
    return checkedMul(elems, elem).value_or(0);
}

// A permuted view is still contiguous when the permutation only moves dims of extent 1 at this binding
// (x.transpose(0, 1) of a [1, T, C] tensor): PyTorch's is_contiguous() ignores them, so nothing is copied.
bool viewContiguousAt(const PlanData& plan, const ShapeTable& shapes, int t)
{
    if (t < 0 || !plan.nonContig[static_cast<size_t>(t)])
        return true;
    const Model& m = *plan.model;
    const int pr = m.tensors[static_cast<size_t>(t)].producer;
    if (pr < 0)
        return false;
    const Node& nd = m.nodes[static_cast<size_t>(pr)];
    if (nd.op != "Transpose" || nd.inputs.empty() || nd.inputs[0] < 0 ||
        plan.nonContig[static_cast<size_t>(nd.inputs[0])])
        return false;
    const auto perm = nd.attrInts("perm");
    const auto& dims = m.tensors[static_cast<size_t>(nd.inputs[0])].shape.dims;
    if (perm.size() != dims.size())
        return false;
    int64_t last = -1;
    for (int64_t d : perm) {
        if (d < 0 || static_cast<size_t>(d) >= dims.size())
            return false;
        const auto v = dims[static_cast<size_t>(d)].eval(shapes.values);
        if (!v)
            return false;
        if (*v == 1)
            continue;
        if (d < last)
            return false;
        last = d;
    }
    return true;
}

} // namespace

bool savedItemActive(const PlanData& plan, const ShapeTable& shapes, const SavedItem& item)
{
    return item.condView < 0 || viewContiguousAt(plan, shapes, item.condView) == item.condContig;
}

int64_t savedItemBytes(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                       const SavedItem& item)
{
    return itemBytesImpl(plan, config, shapes, sizes, item);
}

int64_t sizeOf(const SimContext& c, const SizeRef& ref)
{
    const Sizes& s = c.sizes;
    const size_t i = static_cast<size_t>(std::max(ref.index, 0));
    switch (ref.kind) {
    case SizeRef::Kind::Activation: return ref.index >= 0 ? s.act[i] : 0;
    case SizeRef::Kind::Item: return itemBytesImpl(c.plan, c.config, c.shapes, s, *ref.item);
    case SizeRef::Kind::Gradient: return s.gradBytes[i];
    case SizeRef::Kind::Weight: return s.weightBytes[i];
    case SizeRef::Kind::Buffer:
        return bufferBytes(c.config, c.plan.model->tensors[i].dtype, std::max<int64_t>(s.numel[i], 0));
    case SizeRef::Kind::LogProb: return checkedMul(std::max<int64_t>(s.numel[i], 0), 4).value_or(0);
    case SizeRef::Kind::PersistentWeights: return s.persistentWeights;
    case SizeRef::Kind::Master: return s.master;
    case SizeRef::Kind::PersistentOptimizer: return s.persistentOptimizer;
    case SizeRef::Kind::Autocast: return s.autocast;
    case SizeRef::Kind::DequantTransient: return s.dequantTransient;
    case SizeRef::Kind::Quantized: return s.quantized;
    case SizeRef::Kind::UntiedHead: return s.untiedHead;
    case SizeRef::Kind::LossChunk:
    case SizeRef::Kind::LinearLossChunk:
    case SizeRef::Kind::ShiftedLogProb: return lossChunkBytes(c, ref);
    case SizeRef::Kind::OptimizerTemp: {
        // torch/optim/adam.py _multi_tensor_adam (AdamW: adamw.py _multi_tensor_adamw, and the other foreach
        // optimizers listed): exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs) is one new tensor per
        // parameter, like its state: fp32, or the parameter's 16-bit dtype under the pure 16-bit policies
        // (zeros_like states, optimizerBytesPerParam). index >= 0: that parameter's; -1: all of them.
        switch (c.config.optimizer) {
        case Optimizer::Adam:
        case Optimizer::AdamW:
        case Optimizer::Adagrad:
        case Optimizer::RMSprop:
        case Optimizer::Adadelta:
        case Optimizer::LAMB:
        case Optimizer::Lion: break;
        default: return 0;
        }
        const bool pure16 = c.config.dtype == DtypePolicy::FP16 || c.config.dtype == DtypePolicy::BF16;
        const int64_t element = pure16 ? 2 : 4;
        auto one = [&](int p) {
            return c.plan.reqGrad[static_cast<size_t>(p)]
                       ? checkedMul(std::max<int64_t>(s.numel[static_cast<size_t>(p)], 0), element).value_or(0)
                       : 0;
        };
        if (ref.index >= 0)
            return one(ref.index);
        int64_t temp = 0;
        for (int p : c.plan.trainable)
            temp += one(p);
        return temp;
    }
    }
    return 0;
}

bool guardsHold(const SimContext& c, const SimProgram& program)
{
    for (size_t i = 0; i < program.activeItems.size(); ++i)
        if (savedItemActive(c.plan, c.shapes, *program.activeItems[i]) != (program.activeAnswers[i] != 0))
            return false;
    const std::vector<int64_t>& numel = c.sizes.numel;
    for (size_t i = 0; i < program.sameNumel.size(); ++i) {
        const auto [a, b] = program.sameNumel[i];
        if ((numel[static_cast<size_t>(a)] == numel[static_cast<size_t>(b)]) != (program.sameNumelAnswers[i] != 0))
            return false;
    }
    for (size_t i = 0; i < program.positive.size(); ++i)
        if ((sizeOf(c, program.positive[i]) > 0) != (program.positiveAnswers[i] != 0))
            return false;
    for (size_t i = 0; i < program.offloadable.size(); ++i)
        if ((sizeOf(c, program.offloadable[i]) >= kMinOffloadBytes) != (program.offloadableAnswers[i] != 0))
            return false;
    return true;
}

namespace {

// The tensors live at the peak, biggest first, each with the bytes of every buffer attributed to it (its
// storage, its gradient); then the frees that balance what is still allocated at the last step.
void culpritsAndBalance(const SimProgram& pg, const std::vector<int64_t>& bytes, size_t peakEvent, size_t nT,
                        SimResult& r)
{
    // Raw pointers in locals: a store through uint8_t may alias anything, and the vectors' own fields would be
    // reloaded on every event.
    const size_t nB = pg.buffers.size();
    std::vector<uint8_t> liveFlags(nB, 0);
    uint8_t* const live = liveFlags.data();
    const AllocEvent* const ev = r.events.data();
    const size_t end = std::min(peakEvent, r.events.size());
    for (size_t i = 0; i < end; ++i)
        live[ev[i].id] = ev[i].kind == AllocEvent::Kind::Alloc ? 1 : 0;
    std::vector<int64_t> heldBytes(nT, 0);
    int64_t* const held = heldBytes.data();
    const SimBuffer* const buffers = pg.buffers.data();
    const int64_t* const size = bytes.data();
    for (size_t i = 0; i < nB; ++i)
        if (live[i] && buffers[i].tensor >= 0 && size[i] > 0)
            held[buffers[i].tensor] += size[i];
    std::vector<std::pair<int64_t, int>> culprits;
    for (size_t t = 0; t < nT; ++t)
        if (held[t] > 0)
            culprits.emplace_back(held[t], static_cast<int>(t));
    std::sort(culprits.begin(), culprits.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    r.peakLive.reserve(culprits.size());
    r.peakLiveBytes.reserve(culprits.size());
    for (const auto& c : culprits) {
        r.peakLive.push_back(c.second);
        r.peakLiveBytes.push_back(c.first);
    }
    const int last = pg.steps - 1;
    for (int id : pg.liveAtEnd) {
        const SimBuffer& b = pg.buffers[static_cast<size_t>(id)];
        r.events.push_back({AllocEvent::Kind::Free, id, bytes[static_cast<size_t>(id)], b.category, last, b.tensor});
    }
}

} // namespace

std::vector<int64_t> bufferBytes(const SimContext& c, const SimProgram& pg)
{
    std::vector<int64_t> bytes;
    bytes.reserve(pg.buffers.size());
    for (const SimBuffer& b : pg.buffers)
        bytes.push_back(std::max<int64_t>(sizeOf(c, b.size), 0));
    return bytes;
}

SimResult replayIteration(const SimContext& c, const SimProgram& pg)
{
    return replayIteration(c, pg, bufferBytes(c, pg));
}

SimResult replayIteration(const SimContext& c, const SimProgram& pg, const std::vector<int64_t>& bytes,
                          bool writeEvents)
{
    SimResult r;
    const bool events = pg.key.events && writeEvents;
    // Filled as locals and moved in at the end: the compiler then keeps their ends in registers.
    std::vector<TimelinePoint> timeline;
    std::vector<AllocEvent> written;
    timeline.reserve(static_cast<size_t>(pg.steps));
    if (events)
        written.reserve(pg.events + pg.liveAtEnd.size());

    // The running figures in locals: written through `r`, every event's push_back (int64_t fields) would make
    // the compiler store and reload them.
    int64_t cur = 0, stepHigh = 0, curSaved = 0, peak = 0, peakActivations = 0, peakLoss = 0, peakSaved = 0;
    std::array<int64_t, kCats> cats{};
    int step = 0, stepNode = -1, peakStep = -1;
    Phase stepPhase = Phase::Forward;
    size_t peakEvent = 0;
    const SimBuffer* const buffers = pg.buffers.data();
    const int64_t* const size = bytes.data();
    for (const SimOp& op : pg.ops) {
        switch (op.kind) {
        case SimOp::Kind::Begin:
            stepNode = op.arg;
            stepPhase = op.phase;
            stepHigh = cur;
            break;
        case SimOp::Kind::End:
            timeline.push_back({step, stepNode, stepPhase, cur, std::max(stepHigh, cur)});
            ++step;
            break;
        case SimOp::Kind::Alloc: {
            const SimBuffer& b = buffers[op.arg];
            const int64_t n = size[op.arg];
            cur += n;
            cats[static_cast<size_t>(b.category)] += n;
            if (events)
                written.push_back({AllocEvent::Kind::Alloc, op.arg, n, b.category, step, b.tensor});
            if (cur > stepHigh)
                stepHigh = cur;
            if (cur > peak) {
                peak = cur;
                peakStep = step;
                peakEvent = written.size();
                peakActivations = cats[static_cast<size_t>(Category::Activations)];
                peakLoss = cats[static_cast<size_t>(Category::Loss)];
                peakSaved = curSaved;
            }
            break;
        }
        case SimOp::Kind::Free: {
            const SimBuffer& b = buffers[op.arg];
            const int64_t n = size[op.arg];
            cur -= n;
            cats[static_cast<size_t>(b.category)] -= n;
            if (op.saved)
                curSaved -= n;
            if (events)
                written.push_back({AllocEvent::Kind::Free, op.arg, n, b.category, step, b.tensor});
            break;
        }
        case SimOp::Kind::MarkSaved: curSaved += size[op.arg]; break;
        }
    }
    r.timeline = std::move(timeline);
    r.events = std::move(written);
    r.peak = peak;
    r.peakStep = peakStep;
    r.peakActivations = peakActivations;
    r.peakLoss = peakLoss;
    r.peakSaved = peakSaved;
    for (int u : pg.recomputed)
        r.recomputeMacs += unitMacs(c.plan, c.plan.units[static_cast<size_t>(u)], c.shapes, c.sizes);
    if (events)
        culpritsAndBalance(pg, bytes, peakEvent, c.plan.model->tensors.size(), r);
    return r;
}

std::shared_ptr<SimCache> newSimCache() { return std::make_shared<SimCache>(); }

// A program recorded for this plan whose key matches and whose guards hold at this binding, else a new walk
// (kept for the next tick). The least recently used goes when there are more than kPrograms, or when they
// hold more than kProgramBytes: enough for a tick (events, and the flipped inplace setting), the checkpoint
// curve's k = 1..16, the batch sweep and the advisor's tips together, so the report's later searches find the
// programs its curve recorded (issue 16); the byte bound keeps a 100k-node plan's cache well under the
// issue's 1 GiB resident limit (one such program is ~10 MB).
static size_t programBytes(const SimProgram& p)
{
    return sizeof(SimProgram) + p.ops.capacity() * sizeof(SimOp) + p.buffers.capacity() * sizeof(SimBuffer) +
           (p.liveAtEnd.capacity() + p.recomputed.capacity() + p.key.segmentOfUnit.capacity() + p.allocOps.capacity()) *
               sizeof(int) +
           p.activeItems.capacity() * sizeof(const SavedItem*) + p.sameNumel.capacity() * sizeof(std::pair<int, int>) +
           p.positive.capacity() * sizeof(SizeRef) + p.activeAnswers.capacity() + p.sameNumelAnswers.capacity() +
           p.positiveAnswers.capacity() + p.offloadable.capacity() * sizeof(SizeRef) + p.offloadableAnswers.capacity();
}

static std::shared_ptr<const SimProgram> programFor(const SimContext& c, const SimOptions& opt)
{
    constexpr size_t kPrograms = 40;
    constexpr size_t kProgramBytes = size_t(256) << 20;
    const PlanData& plan = c.plan;
    const Config& config = c.config;
    SimCache* cache = plan.simCache.get();
    if (!cache)
        return std::make_shared<const SimProgram>(recordIteration(c, opt));
    const SimKey key = simKey(config, opt);
    std::vector<std::shared_ptr<const SimProgram>> candidates;
    {
        std::lock_guard<std::mutex> lock(cache->mutex);
        for (auto it = cache->programs.rbegin(); it != cache->programs.rend(); ++it)
            if ((*it)->key == key)
                candidates.push_back(*it);
    }
    for (const auto& pg : candidates)
        if (guardsHold(c, *pg)) {
            {
                std::lock_guard<std::mutex> lock(cache->mutex);
                auto& list = cache->programs; // at most kPrograms entries
                if (auto it = std::find(list.begin(), list.end(), pg); it != list.end())
                    std::rotate(it, it + 1, list.end()); // most recently used last
            }
            return pg;
        }
    auto recorded = std::make_shared<const SimProgram>(recordIteration(c, opt));
    {
        std::lock_guard<std::mutex> lock(cache->mutex);
        auto& list = cache->programs;
        list.push_back(recorded);
        size_t bytes = 0;
        for (const auto& pg : list)
            bytes += programBytes(*pg);
        while (list.size() > 1 && (list.size() > kPrograms || bytes > kProgramBytes)) {
            bytes -= programBytes(*list.front());
            list.erase(list.begin());
        }
    }
    return recorded;
}

PreparedSim prepareSimulation(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                              const SimOptions& opt)
{
    const SimContext c{plan, config, shapes, sizes};
    PreparedSim prepared;
    prepared.program = programFor(c, opt);
    prepared.bytes = bufferBytes(c, *prepared.program);
    return prepared;
}

size_t PreparedSim::events() const { return program->allocOps.size(); }

SimResult runSimulation(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                        const PreparedSim& prepared, bool writeEvents)
{
    const SimContext c{plan, config, shapes, sizes};
    return replayIteration(c, *prepared.program, prepared.bytes, writeEvents);
}

AllocatorStats replayAllocator(const PreparedSim& prepared, AllocatorMode mode, const AllocatorOptions& options)
{
    return replayOps(prepared.program->allocOps, prepared.bytes, mode, options);
}

int64_t simulatePeak(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                     const SimOptions& opt)
{
    const SimContext c{plan, config, shapes, sizes};
    const std::shared_ptr<const SimProgram> pg = programFor(c, opt);
    const std::vector<int64_t> bytes = bufferBytes(c, *pg);
    int64_t cur = 0, peak = 0;
    for (const SimOp& op : pg->ops)
        if (op.kind == SimOp::Kind::Alloc)
            peak = std::max(peak, cur += bytes[static_cast<size_t>(op.arg)]);
        else if (op.kind == SimOp::Kind::Free)
            cur -= bytes[static_cast<size_t>(op.arg)];
    return peak;
}

SimResult simulate(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                   const SimOptions& opt)
{
    const SimContext c{plan, config, shapes, sizes};
    const std::shared_ptr<const SimProgram> pg = programFor(c, opt);
    return replayIteration(c, *pg);
}

} // namespace headroom
