#pragma once
#include <QWidget>

#include <vector>

class QLabel;
class QSlider;
class QSpinBox;

namespace gui {

// A slider on a log2 scale with a spin box beside it, for batch sizes and sequence lengths. The slider stops
// at round values (Snap); the spin box takes any value.
class LogSlider : public QWidget
{
    Q_OBJECT
public:
    // Quarter: four stops per octave (32, 40, 48, 56, 64, ...); PowerOfTwo: batch sizes; Multiple128: sequence
    // lengths, powers of two up to 128 and then multiples of 128, about four per octave.
    enum class Snap : uint8_t { Quarter, PowerOfTwo, Multiple128 };
    explicit LogSlider(QWidget* parent = nullptr, Snap snap = Snap::Quarter);

    void setRange(int minimum, int maximum);
    int value() const;
    void setValue(int value); // emits valueChanged when it changes
    QSlider* slider() const { return m_slider; }
    QSpinBox* spinBox() const { return m_spin; }

    // Marks the largest value that fits ("max 4096" beside the spin box) and ends the slider at twice that
    // (or at the current value, if larger), so its travel is spent where the answer changes; <= 0 hides the
    // mark and gives the slider the whole range back. The widget's width does not change with the mark.
    void setMaxMark(qint64 value);
    QLabel* maxMark() const { return m_mark; }

    int positionFor(int value) const;
    int valueAt(int position) const;
    const std::vector<int>& stops() const { return m_stops; }

signals:
    void valueChanged(int value);

private:
    void setSliderEnd(int maximum);
    Snap m_snap;
    std::vector<int> m_stops;
    QSlider* m_slider;
    QSpinBox* m_spin;
    QLabel* m_mark;
};

} // namespace gui
