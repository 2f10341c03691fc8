#include "reportdocument.h"

#include "languageservice.h"

#include <QCoreApplication>
#include <QFontDatabase>
#include <QPagedPaintDevice>
#include <QPainter>
#include <QTextLayout>

#include <algorithm>

namespace gui {
namespace {

const QColor kRule(0xb0, 0xb7, 0xc3);
const QColor kHeaderFill(0xe4, 0xe9, 0xf1);
const QColor kZebra(0xf5, 0xf7, 0xfa);
const QColor kAccent(0x1f, 0x4e, 0x8c);
const QColor kMuted(0x5a, 0x62, 0x70);

constexpr qreal kCellPadX = 3;
constexpr qreal kCellPadY = 1.5;

QString forLayout(QString text)
{
    text.replace(QLatin1Char('\n'), QChar::LineSeparator);
    return text;
}

// Lays `text` out in lines of `width`, breaking at word boundaries and, for long paths without spaces,
// anywhere: nothing is ever clipped. Returns the height used.
qreal layOut(QTextLayout& layout, qreal width, Qt::Alignment align)
{
    QTextOption option;
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    option.setAlignment(align);
    layout.setTextOption(option);
    layout.setCacheEnabled(true);
    layout.beginLayout();
    qreal y = 0;
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(width);
        line.setPosition(QPointF(0, y));
        y += line.height();
    }
    layout.endLayout();
    return y;
}

} // namespace

// The report's body font: one that has every glyph the language needs (CJK when the UI is Chinese,
// Japanese or Korean), falling back to what the system offers.
QFont reportFont()
{
    const QStringList installed = QFontDatabase::families();
    QStringList wanted;
    if (LanguageService::needsCjkFont(QLocale()))
        wanted = {QStringLiteral("Noto Sans CJK SC"),    QStringLiteral("Source Han Sans SC"),
                  QStringLiteral("Noto Sans SC"),        QStringLiteral("WenQuanYi Micro Hei"),
                  QStringLiteral("Droid Sans Fallback"), QStringLiteral("Microsoft YaHei"),
                  QStringLiteral("PingFang SC")};
    wanted << QStringLiteral("DejaVu Sans") << QStringLiteral("Noto Sans") << QStringLiteral("Liberation Sans");
    QStringList families;
    for (const QString& f : wanted)
        if (installed.contains(f))
            families << f;
    QFont font = QFontDatabase::systemFont(QFontDatabase::GeneralFont);
    if (!families.isEmpty())
        font.setFamilies(families);
    font.setStyleHint(QFont::SansSerif);
    font.setHintingPreference(QFont::PreferNoHinting);
    return font;
}

ReportDocument::ReportDocument(QPagedPaintDevice& device, QPainter& painter, const QFont& baseFont)
    : m_device(device), m_painter(painter), m_base(baseFont)
{
    m_dpi = device.logicalDpiY();
    m_width = device.width();
    m_footerHeight = pt(18);
    m_height = device.height() - m_footerHeight;
}

QFont ReportDocument::font(qreal pointSize, bool bold) const
{
    QFont f = m_base;
    f.setPointSizeF(pointSize);
    f.setBold(bold);
    return f;
}

qreal ReportDocument::textHeight(const QString& text, const QFont& f, qreal width) const
{
    QTextLayout layout(forLayout(text), f, &m_device);
    return layOut(layout, width, Qt::AlignLeft);
}

void ReportDocument::drawText(const QRectF& rect, const QString& text, const QFont& f, const QColor& color,
                              Qt::Alignment align) const
{
    QTextLayout layout(forLayout(text), f, &m_device);
    layOut(layout, rect.width(), align);
    m_painter.setPen(color);
    layout.draw(&m_painter, rect.topLeft());
}

void ReportDocument::drawFooter()
{
    const QFont f = font(7);
    const QRectF box(0, m_height + m_footerHeight * 0.35, m_width, m_footerHeight * 0.65);
    m_painter.setPen(QPen(kRule, 0.75));
    m_painter.drawLine(QPointF(0, box.top()), QPointF(m_width, box.top()));
    const QString page = QCoreApplication::translate("ReportDocument", "Page %1").arg(m_page);
    const qreal pageWidth = pt(60);
    drawText(QRectF(box.left(), box.top() + pt(3), m_width - pageWidth, box.height()), m_footer, f, kMuted,
             Qt::AlignLeft);
    drawText(QRectF(m_width - pageWidth, box.top() + pt(3), pageWidth, box.height()), page, f, kMuted, Qt::AlignRight);
}

void ReportDocument::newPage()
{
    drawFooter();
    if (!m_device.newPage())
        m_ok = false;
    ++m_page;
    m_y = 0;
}

void ReportDocument::ensureSpace(qreal height)
{
    if (m_y > 0 && m_y + height > m_height)
        newPage();
}

void ReportDocument::space(qreal height)
{
    if (m_y > 0)
        m_y = std::min(m_y + height, m_height);
}

void ReportDocument::title(const QString& text, const QString& subtitle)
{
    const QFont big = font(22, true);
    const qreal h = textHeight(text, big, m_width);
    ensureSpace(h + pt(40));
    drawText(QRectF(0, m_y, m_width, h), text, big, kAccent, Qt::AlignLeft);
    m_y += h + pt(2);
    if (!subtitle.isEmpty()) {
        const QFont sub = font(10);
        const qreal sh = textHeight(subtitle, sub, m_width);
        drawText(QRectF(0, m_y, m_width, sh), subtitle, sub, kMuted, Qt::AlignLeft);
        m_y += sh;
    }
    m_y += pt(4);
    m_painter.setPen(QPen(kAccent, pt(1.2)));
    m_painter.drawLine(QPointF(0, m_y), QPointF(m_width, m_y));
    m_y += pt(10);
}

void ReportDocument::heading(const QString& text, qreal keepWith)
{
    const QFont f = font(14, true);
    const qreal h = textHeight(text, f, m_width);
    space(pt(10));
    ensureSpace(h + pt(6) + keepWith);
    drawText(QRectF(0, m_y, m_width, h), text, f, kAccent, Qt::AlignLeft);
    m_y += h + pt(2);
    m_painter.setPen(QPen(kRule, 0.75));
    m_painter.drawLine(QPointF(0, m_y), QPointF(m_width, m_y));
    m_y += pt(5);
}

void ReportDocument::subheading(const QString& text, qreal keepWith)
{
    const QFont f = font(10.5, true);
    const qreal h = textHeight(text, f, m_width);
    space(pt(6));
    ensureSpace(h + pt(3) + keepWith);
    drawText(QRectF(0, m_y, m_width, h), text, f, Qt::black, Qt::AlignLeft);
    m_y += h + pt(3);
}

void ReportDocument::paragraph(const QString& text, qreal pointSize, const QColor& color, bool bold)
{
    const QFont f = font(pointSize, bold);
    const qreal h = textHeight(text, f, m_width);
    ensureSpace(std::min(h, m_height));
    drawText(QRectF(0, m_y, m_width, h), text, f, color, Qt::AlignLeft);
    m_y += h + pt(4);
}

void ReportDocument::bullet(const QString& text, qreal pointSize)
{
    const QFont f = font(pointSize);
    const qreal indent = pt(12);
    const qreal h = textHeight(text, f, m_width - indent);
    ensureSpace(h);
    drawText(QRectF(pt(3), m_y, indent, h), QStringLiteral("•"), f, kAccent, Qt::AlignLeft);
    drawText(QRectF(indent, m_y, m_width - indent, h), text, f, Qt::black, Qt::AlignLeft);
    m_y += h + pt(2.5);
}

void ReportDocument::keyValues(const QList<std::pair<QString, QString>>& rows, qreal keyShare)
{
    const QFont keyFont = font(8.5, true);
    const QFont valueFont = font(8.5);
    const qreal keyWidth = m_width * keyShare;
    const qreal valueWidth = m_width - keyWidth;
    for (const auto& [key, value] : rows) {
        const qreal h = std::max(textHeight(key, keyFont, keyWidth - pt(6)), textHeight(value, valueFont, valueWidth)) +
                        pt(2.5);
        ensureSpace(h);
        drawText(QRectF(0, m_y, keyWidth - pt(6), h), key, keyFont, kMuted, Qt::AlignLeft);
        drawText(QRectF(keyWidth, m_y, valueWidth, h), value, valueFont, Qt::black, Qt::AlignLeft);
        m_y += h;
    }
    m_y += pt(4);
}

qreal ReportDocument::rowHeight(const QList<qreal>& widths, const QStringList& cells, const QFont& f) const
{
    qreal h = 0;
    for (qsizetype c = 0; c < widths.size() && c < cells.size(); ++c)
        h = std::max(h, textHeight(cells[c], f, widths[c] - 2 * pt(kCellPadX)));
    return h + 2 * pt(kCellPadY);
}

void ReportDocument::table(const QList<Column>& columns, const QList<QStringList>& rows, const TableStyle& style)
{
    qreal total = 0;
    for (const Column& c : columns)
        total += c.weight;
    QList<qreal> widths;
    QStringList headers;
    for (const Column& c : columns) {
        widths.append(m_width * c.weight / total);
        headers.append(c.header);
    }
    const QFont headerFont = font(style.pointSize, true);
    const QFont cellFont = font(style.pointSize);
    const qreal headerHeight = rowHeight(widths, headers, headerFont);

    auto drawRow = [&](const QStringList& cells, const QFont& f, qreal h, const QColor& fill, const QColor& color) {
        if (fill.isValid())
            m_painter.fillRect(QRectF(0, m_y, m_width, h), fill);
        qreal x = 0;
        for (qsizetype c = 0; c < widths.size(); ++c) {
            const QRectF cell(x + pt(kCellPadX), m_y + pt(kCellPadY), widths[c] - 2 * pt(kCellPadX),
                              h - 2 * pt(kCellPadY));
            if (c < cells.size())
                drawText(cell, cells[c], f, color, columns[c].align);
            x += widths[c];
        }
        m_y += h;
    };
    auto drawHeader = [&] {
        drawRow(headers, headerFont, headerHeight, kHeaderFill, Qt::black);
        m_painter.setPen(QPen(kRule, 0.75));
        m_painter.drawLine(QPointF(0, m_y), QPointF(m_width, m_y));
    };

    ensureSpace(headerHeight + (rows.isEmpty() ? 0 : rowHeight(widths, rows.front(), cellFont)));
    drawHeader();
    for (qsizetype r = 0; r < rows.size(); ++r) {
        const qreal h = rowHeight(widths, rows[r], cellFont);
        if (m_y + h > m_height) {
            newPage();
            drawHeader();
        }
        const QColor fill = style.zebra && r % 2 == 1 ? kZebra : QColor();
        const QColor color = style.rowColor ? style.rowColor(static_cast<int>(r)) : QColor(Qt::black);
        drawRow(rows[r], cellFont, h, fill, color);
    }
    m_painter.setPen(QPen(kRule, 0.75));
    m_painter.drawLine(QPointF(0, m_y), QPointF(m_width, m_y));
    m_y += pt(6);
}

QRectF ReportDocument::reserve(qreal height)
{
    height = std::min(height, m_height);
    ensureSpace(height);
    const QRectF box(0, m_y, m_width, height);
    m_y += height + pt(4);
    return box;
}

void ReportDocument::finish() { drawFooter(); }

} // namespace gui
