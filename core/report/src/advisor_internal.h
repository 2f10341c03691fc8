#pragma once
// Private to the advisor: what every tip reads (the Situation), how a changed configuration is judged, and
// the list the tips add to. Each tip is one function in advisor_tips.cpp; advisor.cpp runs them in order.
#include "headroom/report/advisor.h"

#include <string>
#include <utility>
#include <vector>

namespace headroom::advisor {

bool multiGpu(const Config& c);

// The need of a changed configuration, as the fit computes it, on the report's plan where it matches.
class Judge
{
public:
    Judge(const Model& model, const Config& config, const EnginePlan* plan);
    // What must fit on the most loaded GPU: peak or reserved (per config.allocator) + context + workspace;
    // and the verdict the report gives it (Fit::fitsSafely on one GPU, the cluster fit on several), so that a
    // tip never says "fits" where the banner would say "does not fit".
    struct Judged
    {
        int64_t need = 0;
        bool fits = false;
    };
    Judged judge(const Config& c) const;
    int64_t need(const Config& c) const { return judge(c).need; }
    const EnginePlan& plan() const { return m_plan; }

private:
    const Model& m_model;
    EnginePlan m_plan;
};

// The configuration advised on and what the tips compare against.
struct Situation
{
    Situation(const Model& m, const Config& c, const AdviceInputs& inputs);
    const Model& model;
    const Config& config;
    const AdviceInputs& known;
    const Judge judge;
    const int64_t before; // the need as configured
    const bool fitsBefore;
    const bool train;
    const int64_t batch;
};

// The advice found so far: a change is kept only with the saving the engine computes for it.
class Tips
{
public:
    explicit Tips(const Situation& s) : m_s(s) {}
    // The tip when it saves memory (then kept), else null.
    Advice* consider(Advice::Kind kind, std::string summary, const Config& changed);
    // Of several strengths of one change: the mildest that fits, else the one that saves most.
    void pickMildest(Advice::Kind kind, const std::vector<std::pair<std::string, Config>>& options);
    std::vector<Advice> take() { return std::move(m_out); }

private:
    Advice judged(Advice::Kind kind, std::string summary, const Config& changed) const;
    const Situation& m_s;
    std::vector<Advice> m_out;
};

// The tips (advisor_tips.cpp), one change each.
void tryBatch(const Situation& s, Tips& tips);
void tryDtype(const Situation& s, Tips& tips);
void tryCheckpoint(const Situation& s, Tips& tips);
void tryAccumulate(const Situation& s, Tips& tips);
void tryInplace(const Situation& s, Tips& tips);
void tryFreeze(const Situation& s, Tips& tips);
void tryZeroStage(const Situation& s, Tips& tips);
void tryGpu0Batch(const Situation& s, Tips& tips);

} // namespace headroom::advisor
