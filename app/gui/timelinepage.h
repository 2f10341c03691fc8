#pragma once
// The Timeline tab: allocated bytes over one iteration; a click selects the live layers.
#include <QWidget>

class QLabel;

namespace gui {

class TimelineChart;

class TimelinePage : public QWidget
{
    Q_OBJECT
public:
    explicit TimelinePage(QWidget* parent = nullptr);
    TimelineChart* chart() const { return m_chart; }
    void setStepInfo(const QString& text);

private:
    TimelineChart* m_chart;
    QLabel* m_info;
};

} // namespace gui
