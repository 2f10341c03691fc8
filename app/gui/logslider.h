#pragma once
#include <QWidget>

class QLabel;
class QSlider;
class QSpinBox;

namespace gui {

// A slider on a log2 scale with a spin box beside it, for batch sizes and sequence lengths.
class LogSlider : public QWidget
{
    Q_OBJECT
public:
    explicit LogSlider(QWidget* parent = nullptr);

    void setRange(int minimum, int maximum);
    int value() const;
    void setValue(int value); // emits valueChanged when it changes
    QSlider* slider() const { return m_slider; }
    QSpinBox* spinBox() const { return m_spin; }

    // Marks the largest value that fits ("max 4096" beside the spin box); <= 0 hides the mark.
    void setMaxMark(qint64 value);
    QLabel* maxMark() const { return m_mark; }

    static int positionFor(int value);
    static int valueAt(int position);

signals:
    void valueChanged(int value);

private:
    QSlider* m_slider;
    QSpinBox* m_spin;
    QLabel* m_mark;
};

} // namespace gui
