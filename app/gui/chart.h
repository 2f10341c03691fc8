#pragma once
// QCustomPlot set up in one place: a bytes axis ticker, palette-following colours, queued replots, and
// painting onto any QPainter (PDF, printer, image) as vector drawing. Each chart is a small subclass.
#include "guiutil.h"

#include "headroom/report/report.h"

#include <utility>

// qcustomplot.h uses `foreach` in its templates; the project builds with QT_NO_FOREACH, so give it a
// range-for for the duration of the include only.
#pragma push_macro("foreach")
#undef foreach
#define foreach(variable, container) for (variable : std::as_const(container))
#include <qcustomplot.h>
#pragma pop_macro("foreach")

#include <QPicture>
#include <QWidget>

namespace gui {

// Axis labels in bytes (IEC or SI), at round byte steps (powers of the unit base, times 1, 2 or 5).
class BytesTicker : public QCPAxisTicker
{
public:
    explicit BytesTicker(headroom::Units units = headroom::Units::IEC) : m_units(units) {}
    void setUnits(headroom::Units units) { m_units = units; }

protected:
    double getTickStep(const QCPRange& range) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;

private:
    headroom::Units m_units;
};

// Axis labels as counts ("1.2 G") for MACs and parameters.
class CountTicker : public QCPAxisTicker
{
protected:
    // Whole counts only: a step under one would label 0.25, 0.5, 0.75 as "0", "1", "1".
    double getTickStep(const QCPRange& range) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;
};

// Category colours, readable on light and dark backgrounds.
QColor categoryColor(int index);

// Moves the plot's legend out of the axis rect into a row below it, laid out in up to `columns`
// columns: a legend inside the plotted area covers data (a bar, the end of a curve) sooner or later.
void placeLegendBelow(QCustomPlot* plot, int columns = 4);

// "Save Chart As..." on the plot's context menu, and the writer behind it: PNG, PDF or (built with Qt SVG)
// SVG by the file's suffix; false and *error (one line naming the file) on failure.
void addSaveMenu(QCustomPlot* plot);
bool savePlot(QCustomPlot* plot, const QString& file, QString* error = nullptr);

class Chart : public QWidget
{
    Q_OBJECT
public:
    explicit Chart(QWidget* parent = nullptr);

    // Fills the chart from one report (the same data the CLI's JSON carries).
    virtual void setReport(const headroom::Model& model, const headroom::Report& report) = 0;
    void setUnits(headroom::Units units);
    headroom::Units units() const { return m_units; }
    QCustomPlot* plot() const { return m_plot; }
    // Until the first report the chart shows this line instead of empty axes.
    void setEmptyText(const QString& text);
    bool hasData() const { return m_hasData; }

    // Paints the chart into `target` on any painter as vector drawing. The chart is laid out at
    // `logicalSize` (default: the target's size) and scaled to the target, so fonts keep their size
    // relative to the chart whatever the device resolution.
    void paintChart(QPainter* painter, const QRectF& target, QSize logicalSize = {}) const;
    QPicture picture(QSize size) const;
    // A replot now (not queued): for images and tests.
    void replotNow();
    // Writes the chart as PNG, PDF or SVG (by the file's suffix); false and *error on failure. The
    // chart's context menu offers it ("Save chart as...").
    bool saveChart(const QString& file, QString* error = nullptr);
    static QStringList saveFormats(); // "png", "pdf" and, built with Qt SVG, "svg"

protected:
    void changeEvent(QEvent* event) override;
    // Re-applies the palette's colours to axes, grid, legend and text items.
    virtual void applyPalette();
    void queueReplot();
    // Called by setReport: the plot replaces the empty-state line.
    void showData();
    QCPAxis* bytesAxis() const { return m_bytesAxis; }
    // Makes `axis` show bytes in the chosen units.
    void setBytesAxis(QCPAxis* axis);

    headroom::Units m_units = headroom::Units::IEC;

private:
    QCustomPlot* m_plot;
    class QStackedLayout* m_stack = nullptr;
    class QLabel* m_empty = nullptr;
    bool m_hasData = false;
    QCPAxis* m_bytesAxis = nullptr;
    QSharedPointer<BytesTicker> m_bytesTicker;
};

} // namespace gui
