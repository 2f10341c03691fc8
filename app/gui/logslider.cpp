#include "logslider.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <vector>

namespace gui {

namespace {
std::vector<int> makeStops(LogSlider::Snap snap)
{
    std::vector<int> t;
    for (int64_t octave = 1; octave <= (int64_t{1} << 30); octave *= 2) {
        if (snap == LogSlider::Snap::PowerOfTwo || (snap == LogSlider::Snap::Multiple128 && octave < 128)) {
            t.push_back(static_cast<int>(octave));
            continue;
        }
        // Four per octave at round numbers (..., 32, 40, 48, 56, 64, 80, ...); sequence lengths rounded down
        // to a multiple of 128 (tensor-core tiles, and how context lengths are quoted).
        for (int quarter = 0; quarter < 4; ++quarter) {
            int64_t v = octave + octave * quarter / 4;
            if (snap == LogSlider::Snap::Multiple128)
                v = v / 128 * 128;
            t.push_back(static_cast<int>(v));
        }
    }
    t.erase(std::unique(t.begin(), t.end()), t.end());
    return t;
}
} // namespace

LogSlider::LogSlider(QWidget* parent, Snap snap)
    : QWidget(parent), m_snap(snap), m_stops(makeStops(snap)), m_slider(new QSlider(Qt::Horizontal, this)),
      m_spin(new QSpinBox(this)), m_mark(new QLabel(this))
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_slider, 1);
    layout->addWidget(m_spin);
    layout->addWidget(m_mark);
    // Wide enough to aim at one stop (a 90 px slider spent 72 px on 1 .. 16,384), and as wide with the
    // "max N" mark as without it: the mark's room is kept while it is hidden.
    m_slider->setMinimumWidth(160);
    m_mark->setObjectName(QStringLiteral("maxMark"));
    m_mark->setMinimumWidth(m_mark->fontMetrics().horizontalAdvance(tr("max %1").arg(99999999)));
    QSizePolicy keep = m_mark->sizePolicy();
    keep.setRetainSizeWhenHidden(true);
    m_mark->setSizePolicy(keep);
    m_mark->hide();
    m_spin->setKeyboardTracking(false);
    m_spin->setAccelerated(true);
    setRange(1, 65536);
    connect(m_slider, &QSlider::valueChanged, this, [this](int position) {
        const int v = std::clamp(valueAt(position), m_spin->minimum(), m_spin->maximum());
        if (v == m_spin->value())
            return;
        const QSignalBlocker block(m_spin);
        m_spin->setValue(v);
        emit valueChanged(v);
    });
    connect(m_spin, &QSpinBox::valueChanged, this, [this](int v) {
        const QSignalBlocker block(m_slider);
        if (positionFor(v) > m_slider->maximum())
            setSliderEnd(v);
        m_slider->setValue(positionFor(v));
        emit valueChanged(v);
    });
}

int LogSlider::positionFor(int value) const
{
    const auto& t = m_stops;
    const auto it = std::lower_bound(t.begin(), t.end(), value);
    if (it == t.end())
        return static_cast<int>(t.size()) - 1;
    // The nearest stop (on a log scale) for values between two stops.
    if (it != t.begin() && *it != value &&
        std::log(static_cast<double>(value) / *(it - 1)) < std::log(static_cast<double>(*it) / value))
        return static_cast<int>(it - t.begin()) - 1;
    return static_cast<int>(it - t.begin());
}

int LogSlider::valueAt(int position) const
{
    const auto& t = m_stops;
    return t[static_cast<size_t>(std::clamp<int>(position, 0, static_cast<int>(t.size()) - 1))];
}

void LogSlider::setRange(int minimum, int maximum)
{
    const QSignalBlocker blockSpin(m_spin);
    const QSignalBlocker blockSlider(m_slider);
    m_spin->setRange(minimum, maximum);
    m_slider->setRange(positionFor(minimum), positionFor(maximum));
    m_slider->setPageStep(m_snap == Snap::PowerOfTwo ? 1 : 4); // one octave
    m_slider->setValue(positionFor(m_spin->value()));
}

int LogSlider::value() const { return m_spin->value(); }

void LogSlider::setValue(int value) { m_spin->setValue(value); }

void LogSlider::setSliderEnd(int maximum)
{
    const auto up = std::lower_bound(m_stops.begin(), m_stops.end(), std::min(maximum, m_spin->maximum()));
    const int end = up == m_stops.end() ? static_cast<int>(m_stops.size()) - 1 : static_cast<int>(up - m_stops.begin());
    m_slider->setMaximum(std::max(end, m_slider->minimum()));
}

void LogSlider::setMaxMark(qint64 value)
{
    const QSignalBlocker block(m_slider);
    m_mark->setVisible(value > 0);
    if (value <= 0) {
        setSliderEnd(m_spin->maximum());
        m_slider->setValue(positionFor(m_spin->value()));
        return;
    }
    setSliderEnd(static_cast<int>(std::min<qint64>(std::max<qint64>(value * 2, m_spin->value()), m_spin->maximum())));
    m_slider->setValue(positionFor(m_spin->value()));
    //: beside a batch / sequence-length slider: the largest value that fits on the GPU
    m_mark->setText(tr("max %1").arg(value));
    m_mark->setToolTip(tr("Largest value that fits on the selected GPU: %1").arg(value));
}

} // namespace gui
