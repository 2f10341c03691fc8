// The core's enums as the PDF report names them, and two small formatters the sections share.
#include "pdfsections.h"

namespace gui::pdf {

QString lossName(headroom::Loss l)
{
    switch (l) {
    case headroom::Loss::CrossEntropy: return PdfReport::tr("Cross-entropy");
    case headroom::Loss::MSE: return PdfReport::tr("Mean squared error");
    case headroom::Loss::None: return PdfReport::tr("None (the graph computes its loss)");
    case headroom::Loss::ChunkedCE: return PdfReport::tr("Chunked cross-entropy (torchtune, 8 chunks)");
    case headroom::Loss::FusedLinearCE: return PdfReport::tr("Fused linear cross-entropy (Liger)");
    case headroom::Loss::ChunkedCE16: return PdfReport::tr("Chunked cross-entropy (litgpt, 16-bit, no upcast)");
    }
    return qs(headroom::toString(l));
}

QString strategyName(headroom::Strategy s)
{
    using S = headroom::Strategy;
    switch (s) {
    case S::Single: return PdfReport::tr("Single GPU");
    case S::DDP: return PdfReport::tr("DistributedDataParallel");
    case S::DP: return PdfReport::tr("DataParallel");
    case S::BalancedDP: return PdfReport::tr("Balanced DataParallel");
    case S::ZeRO1: return PdfReport::tr("ZeRO stage 1");
    case S::ZeRO2: return PdfReport::tr("ZeRO stage 2");
    case S::ZeRO3: return PdfReport::tr("ZeRO stage 3");
    case S::FSDP: return PdfReport::tr("FSDP");
    case S::FSDPNoShard: return PdfReport::tr("FSDP NO_SHARD");
    }
    return qs(headroom::toString(s));
}

QString allocatorName(headroom::AllocatorMode a)
{
    using A = headroom::AllocatorMode;
    switch (a) {
    case A::Exact: return PdfReport::tr("Exact (allocated bytes only)");
    case A::Caching: return PdfReport::tr("PyTorch caching allocator");
    case A::Expandable: return PdfReport::tr("PyTorch caching allocator, expandable segments");
    }
    return qs(headroom::toString(a));
}

QString phaseName(headroom::Phase p)
{
    using P = headroom::Phase;
    switch (p) {
    case P::Forward: return PdfReport::tr("forward");
    case P::Loss: return PdfReport::tr("loss");
    case P::Backward: return PdfReport::tr("backward");
    case P::Optimizer: return PdfReport::tr("optimizer step");
    case P::Recompute: return PdfReport::tr("recompute");
    }
    return qs(headroom::toString(p));
}

QString adviceKindName(headroom::Advice::Kind k)
{
    using K = headroom::Advice::Kind;
    switch (k) {
    case K::Batch: return PdfReport::tr("Smaller batch");
    case K::Dtype: return PdfReport::tr("Precision");
    case K::Checkpoint: return PdfReport::tr("Activation checkpointing");
    case K::Accumulate: return PdfReport::tr("Gradient accumulation");
    case K::Inplace: return PdfReport::tr("Inplace activations");
    case K::Freeze: return PdfReport::tr("Freeze layers");
    case K::ZeroStage: return PdfReport::tr("Sharding (ZeRO/FSDP)");
    case K::Gpu0Batch: return PdfReport::tr("GPU 0 batch share");
    }
    return {};
}

QString probeStatusName(headroom::ProbeResult::Status s)
{
    using S = headroom::ProbeResult::Status;
    switch (s) {
    case S::Ok: return PdfReport::tr("measured");
    case S::NoDevice: return PdfReport::tr("no CUDA device");
    case S::BuiltWithoutCuda: return PdfReport::tr("built without CUDA");
    case S::Failed: return PdfReport::tr("failed");
    case S::Crashed: return PdfReport::tr("crashed");
    case S::TimedOut: return PdfReport::tr("timed out");
    case S::Cancelled: return PdfReport::tr("cancelled");
    }
    return {};
}

QString yesNo(bool b) { return b ? PdfReport::tr("yes") : PdfReport::tr("no"); }

QString percent(int64_t part, int64_t whole)
{
    if (whole <= 0)
        return QStringLiteral("–");
    return QString::number(100.0 * static_cast<double>(part) / static_cast<double>(whole), 'f', 1) + QLatin1Char('%');
}

} // namespace gui::pdf
