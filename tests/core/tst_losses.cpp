// The logits' memory under the losses Hugging Face, torchtune and Liger run (Config::loss: ce, chunked-ce,
// fused-linear-ce), against the arithmetic of each implementation and a CPU measurement (tests/data/losses),
// and what each attention kernel keeps (Config::attention).
// "Logits-related bytes": the high-water mark of the loss-side buffers (Category::Loss: log-probabilities, the
// fp32 copies, their gradients, Liger's chunk and grad_input) plus every activation or gradient shaped like the
// logits (last dim = vocab: the logits, a final softcap's pieces), over the step's allocation events.
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>

using namespace headroom;

namespace {

const std::string kData = HEADROOM_TEST_DATA;

int64_t logitsHighWater(const Model& m, const Evaluation& e, int64_t vocab)
{
    auto vocabShaped = [&](int t) {
        if (t < 0 || static_cast<size_t>(t) >= m.tensors.size())
            return false;
        const auto& d = m.tensors[static_cast<size_t>(t)].shape.dims;
        return !d.empty() && d.back().constantValue().value_or(0) == vocab &&
               m.tensors[static_cast<size_t>(t)].role != TensorRole::Parameter;
    };
    std::map<int64_t, int64_t> live;
    int64_t cur = 0, high = 0;
    for (const AllocEvent& ev : e.events) {
        const bool counted = ev.category == Category::Loss ||
                             (ev.category == Category::Activations && vocabShaped(ev.tensor));
        if (ev.kind == AllocEvent::Kind::Alloc && counted) {
            live[ev.id] = ev.bytes;
            cur += ev.bytes;
            high = std::max(high, cur);
        } else if (ev.kind == AllocEvent::Kind::Free && live.count(ev.id)) {
            cur -= live[ev.id];
            live.erase(ev.id);
        }
    }
    return high;
}

Config configFor(const Model& m, const QString& dtype, const QString& loss, int64_t batch, int64_t seq)
{
    Config c;
    c.dtype = *parseDtype(dtype.toStdString());
    c.loss = *parseLoss(loss.toStdString());
    c.allocator = AllocatorMode::Exact;
    c.symbols = m.defaultBindings();
    c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = seq;
    return c;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t nextPow2(int64_t x)
{
    int64_t p = 1;
    while (p < x)
        p *= 2;
    return p;
}

// Liger (liger_kernel/ops/fused_linear_cross_entropy.py fused_linear_cross_entropy_forward): grad_input
// (BT x H) plus one chunk's logits (chunk x V) and its grad_logits_chunk @ weight (chunk x H), 16-bit here.
int64_t ligerBytes(int64_t bt, int64_t hidden, int64_t vocab, int64_t elem)
{
    const int64_t chunk = std::min(nextPow2(ceilDiv(bt, ceilDiv(vocab, hidden))), bt);
    return bt * hidden * elem + chunk * (vocab + hidden) * elem;
}

} // namespace

class TestLosses : public QObject
{
    Q_OBJECT

private slots:
    // The region measured on CPU (tests/data/losses/measured.json: torch 1.13, lm_head + loss + backward).
    void cpuMeasurement_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("loss");
        QTest::addColumn<QString>("point");
        QTest::addColumn<bool>("fp32Logits");  // Config::hfFp32Logits: transformers <= 4.45's forward
        QTest::addColumn<bool>("keepsOutput"); // Config::loopKeepsOutput: the loop holds the output
        struct Row
        {
            const char *name, *dtype, *loss, *point;
            bool fp32Logits, keepsOutput;
        };
        // F = B*T*V*4 = 8,192,000 (the logits in fp32), F' = B*(T-1)*V*4 = 8,128,000 (shifted, transformers
        // <= 4.45). hf445: F + 2F' at the forward's loss (fp32 logits, the shifted copy, its log-probabilities);
        // its custom loop: F + 3F' (the returned logits beside log_softmax's backward); today's hf under a
        // custom loop: 3F + the held logits (F/2 in bf16, F in fp32).
        for (const Row& r : std::initializer_list<Row>{
                 {"hf fp32", "fp32", "ce", "hf_float32", false, false},
                 {"hf bf16", "bf16", "ce", "hf_bfloat16", false, false},
                 {"chunked fp32", "fp32", "chunked-ce", "chunked_float32", false, false},
                 {"chunked bf16", "bf16", "chunked-ce", "chunked_bfloat16", false, false},
                 {"hf 4.45 fp32", "fp32", "ce", "hf445_float32", true, false},
                 {"hf 4.45 bf16", "bf16", "ce", "hf445_bfloat16", true, false},
                 {"hf custom loop fp32", "fp32", "ce", "hf_custom_float32", false, true},
                 {"hf custom loop bf16", "bf16", "ce", "hf_custom_bfloat16", false, true},
                 {"hf 4.45 custom loop fp32", "fp32", "ce", "hf445_custom_float32", true, true},
                 {"hf 4.45 custom loop bf16", "bf16", "ce", "hf445_custom_bfloat16", true, true},
             })
            QTest::newRow(r.name) << r.dtype << r.loss << r.point << r.fp32Logits << r.keepsOutput;
    }
    void cpuMeasurement()
    {
        QFETCH(QString, dtype);
        QFETCH(QString, loss);
        QFETCH(QString, point);
        QFETCH(bool, fp32Logits);
        QFETCH(bool, keepsOutput);
        std::ifstream f(kData + "/losses/measured.json");
        QVERIFY(f.good());
        const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        // "point": { "peak_bytes_above_baseline": N
        const size_t at = text.find("\"" + point.toStdString() + "\"");
        QVERIFY(at != std::string::npos);
        const size_t key = text.find("peak_bytes_above_baseline", at);
        const int64_t measured = std::stoll(text.substr(text.find(':', key) + 1));
        const Model m = loadModel(kData + "/losses/tiny_lm.config.json");
        Config c = configFor(m, dtype, loss, 2, 128);
        c.hfFp32Logits = fp32Logits;
        c.loopKeepsOutput = keepsOutput;
        const Evaluation e = evaluate(m, c);
        const int64_t got = logitsHighWater(m, e, 8000);
        // the measurement also holds a few KiB of labels and scalars
        QVERIFY2(got <= measured && measured - got < 4096,
                 qPrintable(QStringLiteral("Headroom %1, measured %2").arg(got).arg(measured)));
    }

    // 128k and 256k vocabularies: Llama-3.1-8B (untied, V = 128,256) and Gemma 2 2B (tied, V = 256,000, a final
    // softcap), pure bf16, batch 1. F = B*T*V*4 (the logits in fp32), L = B*T*V*2 (in bf16), C = F/8.
    void largeVocab_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("loss");
        QTest::addColumn<qint64>("seq");
        QTest::addColumn<qint64>("hidden");
        QTest::addColumn<qint64>("vocab");
        QTest::addColumn<bool>("softcap");
        const QString llama = QStringLiteral("external/meta-llama--Llama-3.1-8B-Instruct.json");
        const QString gemma = QStringLiteral("external/google--gemma-2-2b-it.json");
        for (const QString& loss : {QStringLiteral("ce"), QStringLiteral("chunked-ce"),
                                    QStringLiteral("fused-linear-ce"), QStringLiteral("chunked-ce-16")})
            for (qint64 seq : {2048, 8192}) {
                QTest::addRow("llama-3.1-8b %s T=%lld", qPrintable(loss), seq)
                    << llama << loss << seq << qint64{4096} << qint64{128256} << false;
                QTest::addRow("gemma-2-2b %s T=%lld", qPrintable(loss), seq)
                    << gemma << loss << seq << qint64{2304} << qint64{256000} << true;
            }
    }
    void largeVocab()
    {
        QFETCH(QString, file);
        QFETCH(QString, loss);
        QFETCH(qint64, seq);
        QFETCH(qint64, hidden);
        QFETCH(qint64, vocab);
        QFETCH(bool, softcap);
        const Model m = loadModel(kData + "/" + file.toStdString());
        const Evaluation e = evaluate(m, configFor(m, QStringLiteral("bf16"), loss, 1, seq));
        const int64_t F = seq * vocab * 4, L = seq * vocab * 2, C = F / 8;
        // a softcap's tanh keeps its bf16 result for backward (Gemma 2: logits / cap, tanh, * cap)
        const int64_t tanh = softcap ? L : 0;
        int64_t expected = 0;
        if (loss == QLatin1String("ce")) // ForCausalLMLoss: log-probs, their gradient, the fp32 copy's gradient
            expected = tanh + 3 * F;
        else if (loss == QLatin1String("chunked-ce")) // end of forward: logits, all log-probs, one fp32 chunk
            expected = tanh + L + F + C;
        else if (loss == QLatin1String("chunked-ce-16")) // litgpt: logits and all log-probs, both bf16, no upcast
            expected = tanh + 2 * L;
        else // the logits never exist, the softcap is inside Liger's kernel
            expected = ligerBytes(seq, hidden, vocab, 2);
        QCOMPARE(logitsHighWater(m, e, vocab), expected);
    }

    // PyTorch 1.10's log_softmax kept its input beside its result (v1.10.0 derivatives.yaml `_log_softmax: self:
    // _log_softmax_backward_data(grad, result, dim, self)`), so the loss's fp32 copy of the bf16 logits lives
    // until log_softmax's backward: with the three of largeVocab's "ce" (log-probs, their gradient, the copy's
    // gradient), 4 F at that moment.
    void largeVocabTorch110()
    {
        const Model m = loadModel(kData + "/external/meta-llama--Llama-3.1-8B-Instruct.json");
        const int64_t seq = 2048, vocab = 128256, F = seq * vocab * 4;
        Config c = configFor(m, QStringLiteral("bf16"), QStringLiteral("ce"), 1, seq);
        c.torch = TorchVersion::V1_10;
        QCOMPARE(logitsHighWater(m, evaluate(m, c), vocab), 4 * F);
    }

    // One eager BERT layer (hidden 256, 4 heads of 64, intermediate 1024, no dropout, B = 2, T = 128, fp32) against
    // autograd on a CPU, torch 1.13 (Debian's python3-torch 1.13.0a0): the layer written as transformers' BertLayer
    // (q, k, v Linear; matmul(q, k^T) / sqrt(64) + mask; softmax; matmul(., v); dense; LayerNorm(. + x);
    // Linear, gelu, Linear; LayerNorm(. + a)) under torch.autograd.graph.saved_tensors_hooks, summing the distinct
    // storages packed that are neither parameters nor the layer input: 4,460,552 bytes, 8 of them the 0-dim
    // float64 autograd wraps for `/ math.sqrt(64)` (not modelled). 1.13's SoftmaxBackward0 has `_saved_result`
    // only, as 2.x; 1.10's also kept `self`, the masked scores [2, 4, 128, 128] in fp32 (kOlderRules).
    void bertLayerCpuTruth_data()
    {
        QTest::addColumn<QString>("torch");
        QTest::addColumn<qint64>("saved");
        const qint64 measured113 = 4460552 - 8, scores = 2 * 4 * 128 * 128 * 4;
        QTest::newRow("1.13 (measured)") << "1.13" << measured113;
        QTest::newRow("1.10 (+ softmax input)") << "1.10" << measured113 + scores;
    }
    void bertLayerCpuTruth()
    {
        QFETCH(QString, torch);
        QFETCH(qint64, saved);
        QTemporaryDir dir;
        const std::string file = dir.path().toStdString() + "/tiny_bert.config.json";
        std::ofstream(file) << R"({"architectures": ["BertForSequenceClassification"], "model_type": "bert",
            "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 1024, "num_hidden_layers": 1,
            "vocab_size": 1000, "max_position_embeddings": 512, "type_vocab_size": 2, "hidden_act": "gelu",
            "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "layer_norm_eps": 1e-12})";
        const Model m = loadModel(file);
        Config c = configFor(m, QStringLiteral("fp32"), QStringLiteral("ce"), 2, 128);
        c.attention = Attention::Eager;
        c.device = Device::CPU;
        c.torch = *parseTorchVersion(torch.toStdString());
        const Evaluation e = evaluate(m, c);
        int64_t got = 0;
        for (size_t n = 0; n < m.nodes.size(); ++n)
            if (m.nodePath(static_cast<int>(n)).find("encoder/layer.0/") != std::string::npos)
                got += e.nodes[n].savedBytes;
        const int64_t layerInput = 2 * 128 * 256 * 4; // kept by q, k, v's Linear, excluded from the measurement
        QCOMPARE(qint64{got - layerInput}, saved);
    }

    // What the attention kernel keeps, on tiny_lm (8 query heads and 2 key/value heads of 32, B = 2, T = 128):
    // the bytes the attention unit saves, by hand. q and the output are [2, 8, 128, 32]; k and v with their kv
    // heads [2, 2, 128, 32] (transformers passes them so to flash_attn and to flex_attention with enable_gqa);
    // the logsumexp [2, 8, 128] fp32. The math kernel and eager keep the softmax output [2, 8, 128, 128] (on the
    // Softmax node) instead. (SDPA in 16 bits keeps the graph's repeat_kv k and v, as before: tst_hfconfig.)
    // PyTorch 1.10's softmax kept its input beside its result (v1.10.0 derivatives.yaml `_softmax: self:
    // _softmax_backward_data(grad, result, dim, self)`; `self.scalar_type()` from 1.11): in fp32 the masked
    // scores [2, 8, 128, 128] as well, and with no SDPA before 2.0 "sdpa" runs eager.
    void attentionKernels_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("attention");
        QTest::addColumn<QString>("torch");
        QTest::addColumn<QString>("op");
        QTest::addColumn<qint64>("saved");
        const qint64 q = 2 * 8 * 128 * 32, kv = 2 * 2 * 128 * 32, lse = 2 * 8 * 128 * 4, p = 2 * 8 * 128 * 128;
        QTest::newRow("bf16 flash2") << "bf16"
                                     << "flash2"
                                     << "2"
                                     << "MatMul" << (q + 2 * kv + q) * 2 + lse;
        QTest::newRow("bf16 flex") << "bf16"
                                   << "flex"
                                   << "2"
                                   << "MatMul" << (q + 2 * kv + q) * 2 + lse;
        QTest::newRow("bf16 eager") << "bf16"
                                    << "eager"
                                    << "2"
                                    << "Softmax" << p * 2;
        // fp32 operands with grouped-query heads (an fp32 model, QLoRA's kbit-prepared stream): SDPA runs math
        QTest::newRow("fp32 sdpa (math: GQA)") << "fp32"
                                               << "sdpa"
                                               << "2"
                                               << "Softmax" << p * 4;
        // flash_attention_2 casts fp32 q, k, v to 16 bits; flash_attn saves the casts and its 16-bit output
        QTest::newRow("fp32 stream flash2") << "fp32"
                                            << "flash2"
                                            << "2"
                                            << "MatMul" << (q + 2 * kv + q) * 2 + lse;
        QTest::newRow("fp32 flex") << "fp32"
                                   << "flex"
                                   << "2"
                                   << "MatMul" << (q + 2 * kv + q) * 4 + lse;
        QTest::newRow("fp32 eager, torch 1.10") << "fp32"
                                                << "eager"
                                                << "1.10"
                                                << "Softmax" << p * 4 + p * 4;
        QTest::newRow("fp32 sdpa, torch 1.10 (eager)") << "fp32"
                                                       << "sdpa"
                                                       << "1.10"
                                                       << "Softmax" << p * 4 + p * 4;
    }
    void attentionKernels()
    {
        QFETCH(QString, dtype);
        QFETCH(QString, attention);
        QFETCH(QString, torch);
        QFETCH(QString, op);
        QFETCH(qint64, saved);
        const Model m = loadModel(kData + "/losses/tiny_lm.config.json");
        Config c = configFor(m, dtype, QStringLiteral("ce"), 2, 128);
        c.attention = *parseAttention(attention.toStdString());
        c.torch = *parseTorchVersion(torch.toStdString());
        const Evaluation e = evaluate(m, c);
        // the fused unit's bytes sit on its last node, the value MatMul
        int64_t got = -1;
        for (size_t n = m.nodes.size(); n-- > 0;)
            if (m.nodes[n].op == op.toStdString() && m.nodes[n].module.find("self_attn") != std::string::npos &&
                m.nodes[n].module.find("_proj") == std::string::npos) {
                got = e.nodes[n].savedBytes;
                break;
            }
        QCOMPARE(qint64{got}, saved);
    }
};

QTEST_GUILESS_MAIN(TestLosses)
#include "tst_losses.moc"
