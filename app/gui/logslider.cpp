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
// Slider stops: four per octave at round numbers (..., 32, 40, 48, 56, 64, 80, 96, 112, 128, ...), so a
// drag lands on batch sizes people use; the spin box takes any value.
const std::vector<int>& stops()
{
    static const std::vector<int> table = [] {
        std::vector<int> t;
        for (int64_t octave = 1; octave <= (int64_t{1} << 30); octave *= 2)
            for (int quarter = 0; quarter < 4; ++quarter)
                t.push_back(static_cast<int>(octave + octave * quarter / 4));
        t.erase(std::unique(t.begin(), t.end()), t.end());
        return t;
    }();
    return table;
}
} // namespace

LogSlider::LogSlider(QWidget* parent)
    : QWidget(parent), m_slider(new QSlider(Qt::Horizontal, this)), m_spin(new QSpinBox(this)), m_mark(new QLabel(this))
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_slider, 1);
    layout->addWidget(m_spin);
    layout->addWidget(m_mark);
    m_mark->setObjectName(QStringLiteral("maxMark"));
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
        m_slider->setValue(positionFor(v));
        emit valueChanged(v);
    });
}

int LogSlider::positionFor(int value)
{
    const auto& t = stops();
    const auto it = std::lower_bound(t.begin(), t.end(), value);
    if (it == t.end())
        return static_cast<int>(t.size()) - 1;
    // The nearest stop (on a log scale) for values between two stops.
    if (it != t.begin() && *it != value &&
        std::log(static_cast<double>(value) / *(it - 1)) < std::log(static_cast<double>(*it) / value))
        return static_cast<int>(it - t.begin()) - 1;
    return static_cast<int>(it - t.begin());
}

int LogSlider::valueAt(int position)
{
    const auto& t = stops();
    return t[static_cast<size_t>(std::clamp<int>(position, 0, static_cast<int>(t.size()) - 1))];
}

void LogSlider::setRange(int minimum, int maximum)
{
    const QSignalBlocker blockSpin(m_spin);
    const QSignalBlocker blockSlider(m_slider);
    m_spin->setRange(minimum, maximum);
    m_slider->setRange(positionFor(minimum), positionFor(maximum));
    m_slider->setPageStep(4); // one octave
    m_slider->setValue(positionFor(m_spin->value()));
}

int LogSlider::value() const { return m_spin->value(); }

void LogSlider::setValue(int value) { m_spin->setValue(value); }

void LogSlider::setMaxMark(qint64 value)
{
    m_mark->setVisible(value > 0);
    if (value <= 0)
        return;
    //: beside a batch / sequence-length slider: the largest value that fits on the GPU
    m_mark->setText(tr("max %1").arg(value));
    m_mark->setToolTip(tr("Largest value that fits on the selected GPU: %1").arg(value));
}

} // namespace gui
