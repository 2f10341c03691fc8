#include "chart.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QStackedLayout>
#ifdef HEADROOM_HAVE_SVG
#include <QSvgGenerator>
#endif

#include <QCursor>
#include <QEvent>
#include <QPainter>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace gui {

double BytesTicker::getTickStep(const QCPRange& range)
{
    const double base = m_units == headroom::Units::IEC ? 1024.0 : 1000.0;
    const double raw = range.size() / static_cast<double>(mTickCount + 1e-10);
    if (raw <= 0)
        return 1;
    // The unit the step falls in, then a 1-2-5 (or 1-2-4-8 for IEC) mantissa within it.
    double unit = 1;
    while (raw / unit >= base)
        unit *= base;
    const double m = raw / unit;
    const double nice = m <= 1     ? 1
                        : m <= 2   ? 2
                        : m <= 5   ? 5
                        : m <= 10  ? 10
                        : m <= 20  ? 20
                        : m <= 50  ? 50
                        : m <= 100 ? 100
                        : m <= 200 ? 200
                                   : 500;
    return nice * unit;
}

QString BytesTicker::getTickLabel(double tick, const QLocale&, QChar, int)
{
    return bytesText(static_cast<int64_t>(std::llround(tick)), m_units);
}

double CountTicker::getTickStep(const QCPRange& range) { return std::max(1.0, QCPAxisTicker::getTickStep(range)); }

QString CountTicker::getTickLabel(double tick, const QLocale&, QChar, int)
{
    return countText(static_cast<int64_t>(std::llround(tick)));
}

QColor categoryColor(int index)
{
    // Tableau 10: distinct hues of medium lightness that work on white and on dark grey.
    static const QColor colors[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0xe1, 0x57, 0x59),
                                    QColor(0x76, 0xb7, 0xb2), QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48),
                                    QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f),
                                    QColor(0xba, 0xb0, 0xac)};
    return colors[static_cast<size_t>(index) % std::size(colors)];
}

void placeLegendBelow(QCustomPlot* plot, int columns)
{
    QCPLegend* legend = plot->legend;
    if (!legend)
        return;
    legend->setVisible(true);
    if (QCPLayoutInset* inset = plot->axisRect()->insetLayout(); inset->elements(false).contains(legend))
        inset->take(legend);
    if (plot->plotLayout()->hasElement(1, 0))
        return;
    plot->plotLayout()->addElement(1, 0, legend);
    plot->plotLayout()->setRowStretchFactor(1, 0.001); // as tall as its items, the axis rect takes the rest
    plot->plotLayout()->setRowSpacing(4);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(columns);
    legend->setMargins(QMargins(6, 2, 6, 2));
    legend->setRowSpacing(0);
    legend->setColumnSpacing(12);
}

Chart::Chart(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)), m_bytesTicker(new BytesTicker)
{
    m_stack = new QStackedLayout(this);
    m_stack->setContentsMargins(0, 0, 0, 0);
    m_empty = new QLabel(tr("Open an ONNX model (File > Open, or drop one on the window) to see this chart."), this);
    m_empty->setObjectName(QStringLiteral("chartEmptyState"));
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_plot);
    addSaveMenu(m_plot);
    m_plot->setMinimumSize(240, 160);
    m_plot->setNoAntialiasingOnDrag(true);
    // Replots are queued and coalesced with the event loop; the GUI never waits on a chart.
    m_plot->setPlottingHint(QCP::phImmediateRefresh, false);
}

void Chart::setBytesAxis(QCPAxis* axis)
{
    m_bytesAxis = axis;
    axis->setTicker(m_bytesTicker);
}

void Chart::setUnits(headroom::Units units)
{
    if (units == m_units)
        return;
    m_units = units;
    m_bytesTicker->setUnits(units);
    queueReplot();
}

QStringList Chart::saveFormats()
{
    QStringList formats{QStringLiteral("png"), QStringLiteral("pdf")};
#ifdef HEADROOM_HAVE_SVG
    formats << QStringLiteral("svg");
#endif
    return formats;
}

bool Chart::saveChart(const QString& file, QString* error) { return savePlot(m_plot, file, error); }

bool savePlot(QCustomPlot* plot, const QString& file, QString* error)
{
    const QString suffix = QFileInfo(file).suffix().toLower();
    const int w = std::max(plot->width(), 640), h = std::max(plot->height(), 400);
    bool ok = false;
    if (suffix == QLatin1String("png")) {
        ok = plot->savePng(file, w, h, 2.0);
    } else if (suffix == QLatin1String("pdf")) {
        ok = plot->savePdf(file, w, h);
#ifdef HEADROOM_HAVE_SVG
    } else if (suffix == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setFileName(file);
        svg.setSize(QSize(w, h));
        svg.setViewBox(QRect(0, 0, w, h));
        QCPPainter painter;
        ok = painter.begin(&svg);
        if (ok) {
            plot->toPainter(&painter, w, h);
            ok = painter.end();
        }
#endif
    } else {
        if (error)
            *error = Chart::tr("%1: unknown image format (use %2)")
                         .arg(QDir::toNativeSeparators(file), Chart::saveFormats().join(QStringLiteral(", ")));
        return false;
    }
    if (!ok && error)
        *error = Chart::tr("%1: cannot write the chart").arg(QDir::toNativeSeparators(file));
    return ok;
}

void addSaveMenu(QCustomPlot* plot)
{
    plot->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(plot, &QWidget::customContextMenuRequested, plot, [plot](const QPoint& pos) {
        QMenu menu(plot);
        menu.addAction(Chart::tr("Save Chart As…"), plot, [plot] {
            QStringList filters;
            for (const QString& f : Chart::saveFormats())
                filters << Chart::tr("%1 files (*.%2)").arg(f.toUpper(), f);
            QWidget* owner = plot->parentWidget() ? plot->parentWidget() : plot;
            const QString name = owner->objectName().isEmpty() ? QStringLiteral("chart") : owner->objectName();
            const QString file = QFileDialog::getSaveFileName(plot, Chart::tr("Save chart"),
                                                              QDir::home().filePath(name + QStringLiteral(".png")),
                                                              filters.join(QStringLiteral(";;")));
            QString error;
            if (!file.isEmpty() && !savePlot(plot, file, &error))
                QToolTip::showText(QCursor::pos(), error, plot);
        });
        menu.exec(plot->mapToGlobal(pos));
    });
}

void Chart::setEmptyText(const QString& text) { m_empty->setText(text); }

void Chart::showData()
{
    m_hasData = true;
    m_stack->setCurrentWidget(m_plot);
}

void Chart::queueReplot() { m_plot->replot(QCustomPlot::rpQueuedReplot); }

void Chart::replotNow() { m_plot->replot(QCustomPlot::rpImmediateRefresh); }

void Chart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
        applyPalette();
        queueReplot();
    }
}

void Chart::applyPalette()
{
    const QPalette& p = palette();
    const QColor fg = p.color(QPalette::WindowText);
    QColor grid = fg;
    grid.setAlphaF(0.15f);
    m_plot->setBackground(p.brush(QPalette::Base));
    for (QCPAxisRect* rect : m_plot->axisRects()) {
        rect->setBackground(p.brush(QPalette::Base));
        for (QCPAxis* axis : rect->axes()) {
            axis->setBasePen(QPen(fg));
            axis->setTickPen(QPen(fg));
            axis->setSubTickPen(QPen(fg));
            axis->setTickLabelColor(fg);
            axis->setLabelColor(fg);
            axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
            axis->grid()->setZeroLinePen(Qt::NoPen);
        }
    }
    if (m_plot->legend) {
        m_plot->legend->setBrush(p.brush(QPalette::Base));
        m_plot->legend->setBorderPen(QPen(grid));
        m_plot->legend->setTextColor(fg);
    }
    for (int i = 0; i < m_plot->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(m_plot->item(i)); text && !text->property("onBar").toBool())
            text->setColor(fg);
}

QPicture Chart::picture(QSize size) const
{
    QPicture picture;
    QCPPainter painter(&picture);
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    m_plot->toPainter(&painter, size.width(), size.height());
    painter.end();
    return picture;
}

void Chart::paintChart(QPainter* painter, const QRectF& target, QSize logicalSize) const
{
    if (logicalSize.isEmpty())
        logicalSize = target.size().toSize();
    const QPicture pic = picture(logicalSize);
    painter->save();
    painter->translate(target.topLeft());
    painter->scale(target.width() / logicalSize.width(), target.height() / logicalSize.height());
    painter->drawPicture(0, 0, pic);
    painter->restore();
}

} // namespace gui
