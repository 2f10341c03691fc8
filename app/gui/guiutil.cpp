#include "guiutil.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <QSettings>

#include <algorithm>
#include <unordered_map>

namespace gui {

QString gpuDisplayName(const std::string& presetName)
{
    static const QRegularExpression sizeSuffix(QStringLiteral("\\s+\\d+\\s*GB$"));
    QString name = qs(presetName);
    name.remove(sizeSuffix);
    return name;
}

QString modeName(headroom::Mode m)
{
    return m == headroom::Mode::Train ? QCoreApplication::translate("gui", "Training")
                                      : QCoreApplication::translate("gui", "Inference");
}

QString dtypeName(headroom::DtypePolicy d)
{
    using D = headroom::DtypePolicy;
    switch (d) {
    case D::FP32: return QCoreApplication::translate("gui", "FP32");
    case D::FP16: return QCoreApplication::translate("gui", "Pure FP16");
    case D::BF16: return QCoreApplication::translate("gui", "Pure BF16");
    case D::AmpFP16: return QCoreApplication::translate("gui", "AMP (autocast FP16)");
    case D::AmpBF16: return QCoreApplication::translate("gui", "AMP (autocast BF16)");
    case D::MixedFP16: return QCoreApplication::translate("gui", "Mixed FP16 + FP32 master weights");
    case D::MixedBF16: return QCoreApplication::translate("gui", "Mixed BF16 + FP32 master weights");
    case D::INT8: return QCoreApplication::translate("gui", "INT8 weights (inference)");
    case D::INT4: return QCoreApplication::translate("gui", "INT4 weights (inference)");
    }
    return qs(headroom::toString(d));
}

QString optimizerName(headroom::Optimizer o)
{
    using O = headroom::Optimizer;
    switch (o) {
    case O::SGD: return QCoreApplication::translate("gui", "SGD");
    case O::Momentum: return QCoreApplication::translate("gui", "SGD with momentum");
    case O::Adam: return QCoreApplication::translate("gui", "Adam");
    case O::AdamW: return QCoreApplication::translate("gui", "AdamW");
    case O::Adagrad: return QCoreApplication::translate("gui", "Adagrad");
    case O::RMSprop: return QCoreApplication::translate("gui", "RMSprop");
    case O::Adadelta: return QCoreApplication::translate("gui", "Adadelta");
    case O::Lion: return QCoreApplication::translate("gui", "Lion");
    case O::LAMB: return QCoreApplication::translate("gui", "LAMB");
    case O::Adam8bit: return QCoreApplication::translate("gui", "8-bit Adam");
    case O::Adafactor: return QCoreApplication::translate("gui", "Adafactor");
    case O::Custom: return QCoreApplication::translate("gui", "Custom");
    case O::PagedAdamW: return QCoreApplication::translate("gui", "Paged AdamW (32-bit)");
    case O::PagedAdamW8bit: return QCoreApplication::translate("gui", "Paged AdamW (8-bit)");
    }
    return qs(headroom::toString(o));
}

QString strategyName(headroom::Strategy s)
{
    using S = headroom::Strategy;
    switch (s) {
    case S::Single: return QCoreApplication::translate("gui", "Single GPU");
    case S::DDP: return QCoreApplication::translate("gui", "DDP (DistributedDataParallel)");
    case S::DP: return QCoreApplication::translate("gui", "DataParallel");
    case S::BalancedDP: return QCoreApplication::translate("gui", "Balanced DataParallel");
    case S::ZeRO1: return QCoreApplication::translate("gui", "ZeRO-1");
    case S::ZeRO2: return QCoreApplication::translate("gui", "ZeRO-2");
    case S::ZeRO3: return QCoreApplication::translate("gui", "ZeRO-3");
    case S::FSDP: return QCoreApplication::translate("gui", "FSDP");
    case S::FSDPNoShard: return QCoreApplication::translate("gui", "FSDP NO_SHARD (not sharded)");
    }
    return qs(headroom::toString(s));
}

QString allocatorName(headroom::AllocatorMode a)
{
    using A = headroom::AllocatorMode;
    switch (a) {
    case A::Exact: return QCoreApplication::translate("gui", "Exact (allocated peak)");
    case A::Caching: return QCoreApplication::translate("gui", "Caching allocator (reserved)");
    case A::Expandable: return QCoreApplication::translate("gui", "Expandable segments");
    }
    return qs(headroom::toString(a));
}

std::vector<int> liveTensorsAt(const headroom::Model& model, const std::vector<headroom::AllocEvent>& events, int step)
{
    // Replays the engine's own allocation events up to `step`; no sizes are computed here.
    std::unordered_map<int64_t, int> live; // buffer id -> tensor
    for (const headroom::AllocEvent& e : events) {
        if (e.step > step)
            break;
        if (e.kind == headroom::AllocEvent::Kind::Alloc) {
            if ((e.category == headroom::Category::Activations || e.category == headroom::Category::Loss) &&
                e.tensor >= 0 && static_cast<size_t>(e.tensor) < model.tensors.size())
                live.emplace(e.id, e.tensor);
        } else {
            live.erase(e.id);
        }
    }
    std::vector<int> out;
    out.reserve(live.size());
    for (const auto& [id, tensor] : live)
        out.push_back(tensor);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

void useSettingsDirectory(const QString& dir)
{
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir);
}

} // namespace gui
