// Slider-to-repaint latency of the main window: move the batch slider one stop, then run the event loop
// until the figures for that batch have landed (on the GUI thread, or from the worker when the engine
// is slower than a frame) and the verdict and the visible view (layer tree, or timeline chart) have
// repainted after that. Median and maximum over a 100-step drag (50 stops up, 50 down), on resnet50, a
// 10k-node transformer and a 100k-node residual chain (seq 128, as `--set seq=128`). Also: how long until
// the slider itself repaints (is the GUI thread free?), how long from the figures' arrival on the GUI
// thread to those repaints (what the GUI adds), the engine's own time per tick, and for "open", the
// longest the GUI thread is blocked from openFile until the first figures have painted.
#include "controlspanel.h"
#include "guiutil.h"
#include "layerspage.h"
#include "logslider.h"
#include "mainwindow.h"
#include "session.h"
#include "timelinechart.h"
#include "timelinepage.h"
#include "verdict.h"

#include "headroom/import/synthetic.h"

#include <benchmark/benchmark.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QSettings>
#include <QSlider>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>

#include <algorithm>
#include <functional>

namespace {

// Runs the event loop until `done` or the timeout (the bench links no QtTest).
template <typename F> bool waitFor(F done, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return done();
}

// Counts paint events on the widgets whose repaint ends a tick.
class PaintWatch : public QObject
{
public:
    int paints = 0;
    QElapsedTimer* clock = nullptr; // when set: the clock's reading at the first paint since firstPaintMs was reset
    double firstPaintMs = -1;
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::Paint) {
            ++paints;
            if (clock && clock->isValid() && firstPaintMs < 0)
                firstPaintMs = static_cast<double>(clock->nsecsElapsed()) / 1e6;
        }
        return false;
    }
};

// Starts a clock when a worker's result is delivered to the session (a queued call), before any view
// handles it: the moment the figures arrive on the GUI thread.
class ArrivalWatch : public QObject
{
public:
    QElapsedTimer arrived;
    std::function<void()> onArrival;
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::MetaCall) {
            arrived.start();
            if (onArrival)
                onArrival();
        }
        return false;
    }
};

QTemporaryDir& tempDir()
{
    static QTemporaryDir dir;
    return dir;
}

// Issue 24: a MoE config.json must tick as fast as the dense model of the same depth and width. Mixtral-8x7B
// against Mistral-7B-v0.1 (32 layers, hidden 4096, 32/8 heads, 14336 wide, vocab 32000), as bench_import's
// BM_TickPlanConfig compares the engine alone.
QString mistral7bConfig()
{
    const QString path = tempDir().filePath(QStringLiteral("mistral7b.config.json"));
    if (!QFile::exists(path)) {
        QFile f(path);
        f.open(QIODevice::WriteOnly);
        f.write(R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false,
        "sliding_window": 4096, "torch_dtype": "bfloat16"})");
    }
    return path;
}

QString modelFile(int which)
{
    if (which == 3)
        return mistral7bConfig();
    if (which == 4)
        return QStringLiteral(HEADROOM_TEST_DATA "/moe/Mixtral-8x7B-v0.1.config.json");
    if (which == 0)
        return QStringLiteral(HEADROOM_TEST_DATA "/resnet50.onnx");
    if (which == 2) {
        const QString path = tempDir().filePath(QStringLiteral("chain100k.onnx"));
        if (!QFile::exists(path)) {
            QFile f(path);
            f.open(QIODevice::WriteOnly);
            const std::string bytes = headroom::makeSyntheticChain(headroom::syntheticChainBlocksFor(100000), 256);
            f.write(bytes.data(), static_cast<qint64>(bytes.size()));
        }
        // The chain's input is [batch, seq, 256]; seq 128 as the CLI's --set seq=128 (the controls read it).
        QSettings().setValue(QStringLiteral("symbols/seq"), 128);
        return path;
    }
    const QString path = tempDir().filePath(QStringLiteral("transformer10k.onnx"));
    if (!QFile::exists(path)) {
        QFile f(path);
        f.open(QIODevice::WriteOnly);
        const std::string bytes = headroom::makeSyntheticTransformer(120, 256, 8, 8000);
        f.write(bytes.data(), static_cast<qint64>(bytes.size()));
    }
    return path;
}

void BM_SliderDrag(benchmark::State& state)
{
    const int which = static_cast<int>(state.range(0));
    const int tab = static_cast<int>(state.range(1));
    gui::MainWindow w;
    w.resize(1500, 950);
    w.show();
    bool loaded = false;
    QObject::connect(&w, &gui::MainWindow::modelLoaded, [&] { loaded = true; });
    w.openFile(modelFile(which));
    if (!waitFor([&] { return loaded; }, 120000)) {
        state.SkipWithError("model did not load");
        return;
    }
    w.tabs()->setCurrentIndex(tab);
    gui::LogSlider* slider = w.controls()->batchSlider();
    slider->setValue(1);
    waitFor([&] { return w.session()->isComplete(); }, 120000);
    waitFor([] { return false; }, 200);

    std::vector<QWidget*> watched = {w.verdict()};
    if (tab == 0)
        watched.push_back(w.layersPage()->view()->viewport());
    else
        watched.push_back(w.timelinePage()->chart()->plot());
    std::vector<PaintWatch> watches(watched.size());
    PaintWatch sliderWatch;
    for (size_t i = 0; i < watched.size(); ++i)
        watched[i]->installEventFilter(&watches[i]);
    slider->slider()->installEventFilter(&sliderWatch);
    const headroom::Model& model = *w.session()->model();
    auto shownBatch = [&] { return w.session()->report().config.symbols[static_cast<size_t>(model.batchSymbol)]; };
    int64_t target = 0;
    bool landed = false;
    std::vector<int> paintsAtLanding(watched.size());
    // Paints counted from the figures' arrival: at the tick's start when the GUI thread computes them
    // (setValue returns with them), else when the worker's result is delivered, before any view handles it.
    auto markPaints = [&] {
        for (size_t i = 0; i < watched.size(); ++i)
            paintsAtLanding[i] = watches[i].paints;
        watches[0].firstPaintMs = -1;
    };
    ArrivalWatch arrival; // from the figures' arrival on the GUI thread to the repaints showing them
    arrival.onArrival = markPaints;
    w.session()->installEventFilter(&arrival);
    watches[0].clock = &arrival.arrived;
    QObject::connect(w.session(), &gui::AnalysisSession::reportChanged, [&] {
        if (!landed && shownBatch() == target)
            landed = true;
    });
    std::vector<double> latencies, sliderLatencies, afterLanding, verdictAfter, engine;
    for (auto _ : state) {
        latencies.clear();
        sliderLatencies.clear();
        afterLanding.clear();
        verdictAfter.clear();
        engine.clear();
        const int start = slider->slider()->value();
        for (int i = 0; i < 100; ++i) {
            // The batch slider stops at powers of two and ends at twice the largest batch that fits: a drag
            // goes to its end and back.
            const int position = std::clamp(start + (i < 50 ? i + 1 : 99 - i), slider->slider()->minimum(),
                                            slider->slider()->maximum());
            if (position == slider->slider()->value())
                continue;
            target = slider->valueAt(position);
            landed = false;
            const int sliderPaints = sliderWatch.paints;
            // Two stops can give the same verdict text (a need rounded to a few digits): no repaint is due.
            const QString verdictBefore = w.verdict()->text();
            double sliderMs = -1;
            double verdictMs = -1; // from the figures' arrival to the verdict's repaint
            markPaints();
            QElapsedTimer timer;
            timer.start();
            slider->slider()->setValue(position); // what a drag does: valueChanged -> recompute -> views
            auto done = [&] {
                if (sliderMs < 0 && sliderWatch.paints > sliderPaints)
                    sliderMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
                if (!landed)
                    return false;
                // The verdict's first paint after the arrival, timed when it happened (the shown tab's
                // views may still be updating after it, in the same handler).
                if (verdictMs < 0 && watches[0].paints > paintsAtLanding[0])
                    verdictMs = watches[0].firstPaintMs;
                else if (verdictMs < 0 && w.verdict()->text() == verdictBefore)
                    verdictMs = 0;
                for (size_t k = 0; k < watched.size(); ++k)
                    if (watches[k].paints <= paintsAtLanding[k] && !(k == 0 && w.verdict()->text() == verdictBefore))
                        return false;
                return sliderMs >= 0;
            };
            while (!done() && timer.elapsed() < 2000)
                QCoreApplication::processEvents(QEventLoop::AllEvents);
            latencies.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
            // A tick computed on the GUI thread has no arrival: its figures are there when setValue returns.
            const bool viaWorker = landed && arrival.arrived.isValid() && arrival.arrived.elapsed() <= timer.elapsed();
            verdictAfter.push_back(!landed ? 2000.0 : viaWorker ? verdictMs : latencies.back());
            afterLanding.push_back(!landed     ? 2000.0
                                   : viaWorker ? static_cast<double>(arrival.arrived.nsecsElapsed()) / 1e6
                                               : latencies.back());
            arrival.arrived.invalidate();
            engine.push_back(w.session()->lastFastMs());
            if (qEnvironmentVariableIsSet("BENCH_TICKS"))
                std::fprintf(stderr, "tick %d batch %lld: %.1f ms landed=%d verdict=%d view=%d slider=%.1f\n", i,
                             static_cast<long long>(target), latencies.back(), landed,
                             watches[0].paints - paintsAtLanding[0], watches[1].paints - paintsAtLanding[1], sliderMs);
            sliderLatencies.push_back(sliderMs < 0 ? 2000.0 : sliderMs);
        }
    }
    w.session()->removeEventFilter(&arrival);
    for (size_t i = 0; i < watched.size(); ++i)
        watched[i]->removeEventFilter(&watches[i]);
    slider->slider()->removeEventFilter(&sliderWatch);
    std::sort(sliderLatencies.begin(), sliderLatencies.end());
    state.counters["slider_median_ms"] = sliderLatencies[sliderLatencies.size() / 2];
    state.counters["slider_max_ms"] = sliderLatencies.back();
    std::sort(afterLanding.begin(), afterLanding.end());
    state.counters["after_result_median_ms"] = afterLanding[afterLanding.size() / 2];
    state.counters["after_result_max_ms"] = afterLanding.back();
    std::sort(verdictAfter.begin(), verdictAfter.end());
    state.counters["verdict_after_result_median_ms"] = verdictAfter[verdictAfter.size() / 2];
    state.counters["verdict_after_result_max_ms"] = verdictAfter.back();
    std::sort(engine.begin(), engine.end());
    state.counters["engine_median_ms"] = engine[engine.size() / 2]; // evaluate (+ per-GPU shares) alone
    std::vector<double> sorted = latencies;
    std::sort(sorted.begin(), sorted.end());
    state.counters["median_ms"] = sorted[sorted.size() / 2];
    state.counters["max_ms"] = sorted.back();
    state.counters["nodes"] = static_cast<double>(w.session()->model()->nodes.size());
}

// Opening a model: the longest gap between two event-loop turns (a 0 ms timer fires on each) from
// openFile until the first figures for it have landed and the verdict has painted them, and the time
// until then. A gap is how long the window could not answer input or repaint.
void BM_Open(benchmark::State& state)
{
    const int which = static_cast<int>(state.range(0));
    const QString file = modelFile(which); // written before the clock starts
    gui::MainWindow w;
    w.resize(1500, 950);
    w.show();
    w.tabs()->setCurrentIndex(static_cast<int>(state.range(1)));
    waitFor([] { return false; }, 200);
    bool figures = false;
    PaintWatch verdictWatch;
    int paintsAtFigures = 0;
    QObject::connect(w.session(), &gui::AnalysisSession::reportChanged, [&] {
        if (!figures) {
            figures = true;
            paintsAtFigures = verdictWatch.paints;
        }
    });
    w.verdict()->installEventFilter(&verdictWatch);
    double maxGapMs = 0, totalMs = 0;
    for (auto _ : state) {
        QElapsedTimer clock, gap;
        QTimer turn;
        turn.setInterval(0);
        QObject::connect(&turn, &QTimer::timeout, [&] {
            maxGapMs = std::max(maxGapMs, static_cast<double>(gap.nsecsElapsed()) / 1e6);
            gap.restart();
        });
        clock.start();
        gap.start();
        turn.start();
        w.openFile(file);
        while (!(figures && verdictWatch.paints > paintsAtFigures) && clock.elapsed() < 120000)
            QCoreApplication::processEvents(QEventLoop::AllEvents);
        maxGapMs = std::max(maxGapMs, static_cast<double>(gap.nsecsElapsed()) / 1e6);
        totalMs = static_cast<double>(clock.nsecsElapsed()) / 1e6;
        turn.stop();
    }
    w.verdict()->removeEventFilter(&verdictWatch);
    if (!figures) {
        state.SkipWithError("no figures");
        return;
    }
    state.counters["max_blocked_ms"] = maxGapMs;
    state.counters["first_figures_ms"] = totalMs;
    state.counters["nodes"] = static_cast<double>(w.session()->model()->nodes.size());
    // The full report (curves, advice) still lands; the next benchmark must not inherit its worker.
    waitFor([&] { return w.session()->isComplete(); }, 120000);
}

} // namespace

// Args: model (0 resnet50, 1 10k-node transformer, 2 100k-node chain at seq 128, 3 Mistral-7B config.json,
// 4 Mixtral-8x7B config.json), visible tab (0 layers, 2 timeline).
BENCHMARK(BM_SliderDrag)
    ->Args({0, 0})
    ->Args({0, 2})
    ->Args({1, 0})
    ->Args({1, 2})
    ->Args({2, 0})
    ->Args({2, 2})
    ->Args({3, 0})
    ->Args({4, 0})
    ->Args({3, 2})
    ->Args({4, 2})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Open)->Args({0, 0})->Args({2, 0})->Args({2, 2})->Args({3, 0})->Args({4, 0})->Iterations(1)->Unit(
    benchmark::kMillisecond);

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM",
            qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    QTemporaryDir settings;
    gui::useSettingsDirectory(settings.path());
    QApplication::setOrganizationName(QStringLiteral("Headroom"));
    QApplication::setApplicationName(QStringLiteral("HeadroomBench"));
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
