#pragma once
// A flowing, paginated document on a QPagedPaintDevice (the PDF report): a cursor moves down the page,
// blocks that do not fit start a new page, tables repeat their header on every page they span.
#include <QColor>
#include <QFont>
#include <QList>
#include <QRectF>
#include <QString>
#include <QStringList>

#include <functional>
#include <utility>

class QPagedPaintDevice;
class QPainter;

namespace gui {

// The report's font: one with every glyph the UI language needs (CJK for Chinese, Japanese, Korean, as
// QLocale's default says), else a plain sans serif.
QFont reportFont();

class ReportDocument
{
public:
    struct Column
    {
        QString header;
        qreal weight = 1; // share of the table width
        Qt::Alignment align = Qt::AlignLeft;
    };
    struct TableStyle
    {
        qreal pointSize = 7.5;
        bool zebra = true;
        std::function<QColor(int row)> rowColor; // text colour per row; default black
    };

    // `painter` is active on `device`; coordinates are device pixels inside the page margins.
    ReportDocument(QPagedPaintDevice& device, QPainter& painter, const QFont& baseFont);

    void setFooter(const QString& left) { m_footer = left; }
    qreal width() const { return m_width; }
    qreal remaining() const { return m_height - m_y; }
    int pageNumber() const { return m_page; }
    bool ok() const { return m_ok; }
    QPainter& painter() { return m_painter; }

    void newPage();
    void ensureSpace(qreal height); // starts a new page unless `height` fits below the cursor
    void space(qreal height);

    void title(const QString& text, const QString& subtitle);
    // A section heading; it never ends a page alone (keepWith: the height of what must follow it).
    void heading(const QString& text, qreal keepWith = 120);
    void subheading(const QString& text, qreal keepWith = 60);
    void paragraph(const QString& text, qreal pointSize = 9, const QColor& color = Qt::black, bool bold = false);
    void bullet(const QString& text, qreal pointSize = 8.5);
    // Key/value pairs in two columns (keys bold); wraps long values.
    void keyValues(const QList<std::pair<QString, QString>>& rows, qreal keyShare = 0.3);
    // A full table: rows wrap instead of being clipped, the header repeats on every page.
    void table(const QList<Column>& columns, const QList<QStringList>& rows, const TableStyle& style);
    void table(const QList<Column>& columns, const QList<QStringList>& rows) { table(columns, rows, TableStyle{}); }
    // A box of `height` at the cursor (new page first when needed); the caller paints into it.
    QRectF reserve(qreal height);
    // Pixels per point on this device (fonts are sized in points; lengths are computed from them).
    qreal pt(qreal points) const { return points * m_dpi / 72.0; }

    void finish(); // draws the last page's footer

private:
    QFont font(qreal pointSize, bool bold = false) const;
    qreal textHeight(const QString& text, const QFont& font, qreal width) const;
    void drawText(const QRectF& rect, const QString& text, const QFont& font, const QColor& color,
                  Qt::Alignment align) const;
    void drawFooter();
    qreal rowHeight(const QList<qreal>& widths, const QStringList& cells, const QFont& font) const;

    QPagedPaintDevice& m_device;
    QPainter& m_painter;
    QFont m_base;
    QString m_footer;
    qreal m_dpi = 96;
    qreal m_width = 0, m_height = 0, m_footerHeight = 0;
    qreal m_y = 0;
    int m_page = 1;
    bool m_ok = true;
};

} // namespace gui
