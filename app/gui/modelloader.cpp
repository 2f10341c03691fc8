#include "modelloader.h"

#include "headroom/base/error.h"
#include "headroom/load/loader.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QThread>

namespace gui {

ModelLoader::ModelLoader(QObject* parent) : QObject(parent) { qRegisterMetaType<gui::ModelPtr>(); }

ModelLoader::~ModelLoader()
{
    for (Job& job : m_jobs)
        job.cancel->store(true);
    for (Job& job : m_jobs) {
        job.thread->wait();
        delete job.thread;
    }
}

int ModelLoader::load(const QString& path, std::vector<std::pair<std::string, int64_t>> symbolValues,
                      headroom::LoraSpec lora)
{
    cancel();
    const int id = m_nextId++;
    m_current = id;
    auto cancelFlag = std::make_shared<std::atomic<bool>>(false);
    const std::string file = QFile::encodeName(path).toStdString();

    QThread* thread = QThread::create(
        [this, id, cancelFlag, file, path, values = std::move(symbolValues), lora = std::move(lora)] {
            headroom::LoadOptions options;
            options.symbolValues = values;
            options.lora = lora;
            options.cancel = cancelFlag.get();
            QElapsedTimer throttle;
            throttle.start();
            options.progress = [this, id, &throttle](double fraction, std::string_view stage) {
                if (throttle.elapsed() < 30 && fraction < 1.0)
                    return;
                throttle.restart();
                QMetaObject::invokeMethod(
                    this,
                    [this, id, fraction, s = qs(stage)] {
                        if (id == m_current)
                            emit progressChanged(id, fraction, s);
                    },
                    Qt::QueuedConnection);
            };
            ModelPtr model;
            QString error;
            try {
                model = std::make_shared<const headroom::Model>(headroom::loadModel(file, options));
            } catch (const std::exception& e) {
                error = QString::fromUtf8(e.what());
                if (error.isEmpty())
                    error = QFileInfo(path).fileName();
            }
            const bool wasCancelled = cancelFlag->load();
            QMetaObject::invokeMethod(
                this,
                [this, id, model, error, path, wasCancelled] {
                    const bool current = id == m_current;
                    finishJob(id);
                    if (!current)
                        return; // superseded: drop the stale result
                    m_current = 0;
                    if (wasCancelled)
                        emit cancelled(id);
                    else if (model)
                        emit modelAvailable(id, model, path);
                    else
                        emit failed(id, error);
                },
                Qt::QueuedConnection);
        });
    m_jobs.push_back(Job{id, cancelFlag, thread});
    emit started(id, path);
    thread->start();
    return id;
}

void ModelLoader::cancel()
{
    if (m_current == 0)
        return;
    const int id = m_current;
    m_current = 0;
    for (Job& job : m_jobs)
        if (job.id == id)
            job.cancel->store(true);
    emit cancelled(id);
}

void ModelLoader::finishJob(int id)
{
    for (auto it = m_jobs.begin(); it != m_jobs.end(); ++it) {
        if (it->id == id) {
            it->thread->wait();
            delete it->thread;
            m_jobs.erase(it);
            return;
        }
    }
}

} // namespace gui
