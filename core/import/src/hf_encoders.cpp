// BERT and RoBERTa as the published runs trained them: the HF Trainer runs of measured.jsonl (hf-bert-large-*)
// load AutoModelForSequenceClassification (transformers docs model_memory_anatomy.md / perf_train_gpu_one.md),
// so the graph is BertForSequenceClassification / RobertaForSequenceClassification (modeling_bert.py,
// modeling_roberta.py) in training mode, eager attention: embeddings + LayerNorm + dropout, post-norm encoder
// layers, and the classification head on the first token.
#include "hf_builder.h"
#include "hf_families.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>

namespace headroom::detail {
namespace {

// BertLayer: self-attention (query/key/value with biases, dropout on the probabilities), BertSelfOutput
// (dense, dropout, LayerNorm of the sum), BertIntermediate (dense, act), BertOutput (dense, dropout, LayerNorm).
std::string encoderLayer(Builder& b, const std::string& x, int64_t l, const std::string& root)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const std::string L = root + ".encoder.layer." + std::to_string(l);
    const std::string S = "/" + Builder::dotsToPath(L);
    const std::string A = L + ".attention";
    const std::string AS = "/" + Builder::dotsToPath(A);
    const std::string Q = A + ".self";
    const std::string QS = AS + "/self";
    const std::string q = b.heads(b.linear(x, Q + ".query", a.hidden, a.hidden, true), QS, a.heads);
    const std::string k = b.heads(b.linear(x, Q + ".key", a.hidden, a.hidden, true), QS, a.heads);
    const std::string v = b.heads(b.linear(x, Q + ".value", a.hidden, a.hidden, true), QS, a.heads);
    std::string o = b.attention(q, k, v, QS, 1.0 / std::sqrt(static_cast<double>(a.headDim)));
    o = b.dropoutOf(b.linear(o, A + ".output.dense", a.hidden, a.hidden, true), AS + "/output/dropout");
    const std::string h = b.layerNorm(g.node("Add", AS + "/output", {o, x}), A + ".output.LayerNorm", a.hidden);
    const std::string i = b.activation(b.linear(h, L + ".intermediate.dense", a.hidden, a.intermediate, true),
                                       S + "/intermediate/intermediate_act_fn", a.family.act);
    const std::string y = b.dropoutOf(b.linear(i, L + ".output.dense", a.intermediate, a.hidden, true),
                                      S + "/output/dropout");
    return b.layerNorm(g.node("Add", S + "/output", {y, h}), L + ".output.LayerNorm", a.hidden);
}

// The classification head on the first token: BertPooler (dense + tanh), dropout, classifier; RoBERTa has no
// pooler (add_pooling_layer=False) and RobertaClassificationHead: dropout, dense, tanh, dropout, out_proj.
std::string head(Builder& b, const std::string& x, const std::string& root)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const bool roberta = a.family.layout == HfLayout::Roberta;
    const std::string first = g.node("Gather", roberta ? "/classifier" : "/" + root + "/pooler",
                                     {x, g.ints({0}, true)}); // hidden_states[:, 0]
    g.attrInt("axis", 1);
    if (roberta) {
        std::string h = b.dropoutOf(first, "/classifier/dropout");
        h = g.node("Tanh", "/classifier", {b.linear(h, "classifier.dense", a.hidden, a.hidden, true)});
        h = b.dropoutOf(h, "/classifier/dropout");
        return b.linear(h, "classifier.out_proj", a.hidden, a.family.labels, true);
    }
    const std::string pooled = g.node("Tanh", "/" + root + "/pooler/activation",
                                      {b.linear(first, root + ".pooler.dense", a.hidden, a.hidden, true)});
    // classifier_dropout None: hidden_dropout_prob
    return b.linear(b.dropoutOf(pooled, "/dropout"), "classifier", a.hidden, a.family.labels, true);
}

} // namespace

std::string buildEncoderModel(const HfArch& a, const std::string& file)
{
    OnnxBuilder g({.producer = std::string(kHfConfigProducer),
                   .opset = 18,
                   .weightsFile = "config.json.weights",
                   .namedConstantValues = true},
                  a.modelType + " (" + std::filesystem::path(file).filename().string() + ")");
    g.metadata("model_type", a.modelType);
    g.input("input_ids", onnx::TensorProto::INT64);
    Builder b{a, g, a.normEps, a.ropeTheta, a.dropout, {}, {}, {}};
    const bool roberta = a.family.layout == HfLayout::Roberta;
    const std::string root = roberta ? "roberta" : "bert";
    const SeqShape ss = seqShape(g);
    // No attention_mask given: get_extended_attention_mask's (1 - ones) * min, [B, 1, 1, T], added to the scores
    const std::string maskShape = g.node("Concat", "/" + root, {ss.batch, g.ints({1, 1}), ss.seq});
    g.attrInt("axis", 0);
    b.mask = g.node("Expand", "/" + root, {g.scalar(0.0), maskShape});

    const std::string E = root + ".embeddings";
    const std::string ES = "/" + root + "/embeddings";
    const std::string words = g.node("Gather", ES + "/word_embeddings",
                                     {g.weight(E + ".word_embeddings.weight", {a.vocab, a.hidden}), "input_ids"});
    // token_type_ids default to the zeros buffer; RoBERTa's positions start after padding_idx (1)
    const std::string zeros = g.node("Mul", ES, {"input_ids", g.ints({0}, true)});
    const std::string types = g.node(
        "Gather", ES + "/token_type_embeddings",
        {g.weight(E + ".token_type_embeddings.weight", {a.family.typeVocab, a.hidden}), zeros});
    const std::string ids = roberta ? g.node("Add", ES, {ss.positions, g.ints({2}, true)}) : ss.positions;
    const std::string pos = g.node("Gather", ES + "/position_embeddings",
                                   {g.weight(E + ".position_embeddings.weight", {a.positions, a.hidden}), ids});
    std::string x = g.node("Add", ES, {g.node("Add", ES, {words, types}), pos});
    x = b.dropoutOf(b.layerNorm(x, E + ".LayerNorm", a.hidden), ES + "/dropout");
    for (int64_t l = 0; l < a.layers; ++l)
        x = encoderLayer(b, x, l, root);
    g.outputRows(head(b, x, root), onnx::TensorProto::FLOAT, a.family.labels); // [batch, num_labels]
    return g.serialize();
}

} // namespace headroom::detail
