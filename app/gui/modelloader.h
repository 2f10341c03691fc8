#pragma once
// Loads models off the GUI thread (heaptrack's Parser): staged signals per job id, progress and cancel.
// A newer load supersedes an older one; results of superseded jobs are dropped (hotspot's JobTracker).
#include "guiutil.h"

#include "headroom/base/finetune.h"

#include <QObject>

#include <atomic>
#include <memory>
#include <vector>

class QThread;

namespace gui {

class ModelLoader : public QObject
{
    Q_OBJECT
public:
    explicit ModelLoader(QObject* parent = nullptr);
    ~ModelLoader() override;

    // Starts loading `path`; returns the job id. Cancels the job in flight. `lora` rewrites the graph with
    // adapters at import (LoadOptions::lora; r = 0: none).
    int load(const QString& path, std::vector<std::pair<std::string, int64_t>> symbolValues = {},
             headroom::LoraSpec lora = {});
    void cancel();
    bool isBusy() const { return m_current != 0; }
    int currentJob() const { return m_current; }

signals:
    void started(int job, const QString& path);
    void progressChanged(int job, double fraction, const QString& stage);
    // Stage one: the imported model (summary, tree, symbols). The session computes the figures next.
    void modelAvailable(int job, gui::ModelPtr model, const QString& path);
    void failed(int job, const QString& message);
    void cancelled(int job);

private:
    struct Job
    {
        int id = 0;
        std::shared_ptr<std::atomic<bool>> cancel;
        QThread* thread = nullptr;
    };
    void finishJob(int id);

    int m_nextId = 1;
    int m_current = 0;
    std::vector<Job> m_jobs;
};

} // namespace gui
