#pragma once
// The Serving mode (issue 23): a Hugging Face config.json served by vLLM or generate(). Sliders for the
// context length and the concurrent requests, the longest context that starts beside the first, TP and KV-dtype
// choices, the verdict ("Serves 23 concurrent 16k-token requests on H100 80 GB (TP 1)") and the device split
// into weights, activation, CUDA graphs and KV cache. Figures come from ServingState (the core's plans).
#include "servingstate.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QSpinBox;

namespace gui {

class LogSlider;
class ServingBar;

class ServingPage : public QWidget
{
    Q_OBJECT
public:
    explicit ServingPage(QWidget* parent = nullptr);

    ServingState* state() const { return m_state; }
    // Reads `path` (a config.json or a folder with one); false with *error one line naming the file.
    bool openConfig(const QString& path, QString* error);
    void setUnits(headroom::Units units);

    QComboBox* engineBox() const { return m_engine; }
    QComboBox* gpuBox() const { return m_gpu; }
    QComboBox* tpBox() const { return m_tp; }
    QComboBox* kvDtypeBox() const { return m_kvDtype; }
    QComboBox* cacheBox() const { return m_cache; }
    LogSlider* contextSlider() const { return m_context; }
    LogSlider* concurrencySlider() const { return m_concurrency; }
    QSpinBox* newTokensBox() const { return m_newTokens; }
    QLabel* verdictLabel() const { return m_verdict; }
    // The engine, GPU, lengths and TP: the window puts this form in its Configuration panel for the Generate and
    // Serve tasks of a config (the left panel holds the task's knobs), the page keeps the plan's figures.
    QWidget* form() const { return m_form; }
    // The task chose the engine (Generate: generate(), Serve: vLLM): its box hides; the banner carries the
    // verdict, so the page's own line hides too.
    void setTaskEngine(ServingEngine engine);
    QLabel* longestLabel() const { return m_longest; }
    QLabel* legendLabel() const { return m_legend; }
    ServingBar* bar() const { return m_bar; }

private:
    void createControls();
    QWidget* createForm();
    void connectControls();
    void syncControls();
    void refresh();
    void showEngine();

    ServingState* m_state;
    headroom::Units m_units = headroom::Units::IEC;
    QLabel* m_file = nullptr;
    QWidget* m_form = nullptr;
    QLabel* m_engineLabel = nullptr;
    QLabel* m_verdict = nullptr;
    QComboBox* m_engine = nullptr;
    QComboBox* m_gpu = nullptr;
    QComboBox* m_tp = nullptr;
    QComboBox* m_kvDtype = nullptr;
    QComboBox* m_cache = nullptr;
    LogSlider* m_context = nullptr;
    QLabel* m_longest = nullptr;
    LogSlider* m_concurrency = nullptr;
    QLabel* m_concurrencyLabel = nullptr;
    QSpinBox* m_newTokens = nullptr;
    ServingBar* m_bar = nullptr;
    QLabel* m_legend = nullptr;
    QList<QWidget*> m_vllmOnly, m_hfOnly; // rows shown for one engine
};

} // namespace gui
