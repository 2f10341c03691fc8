// The GPU presets' lookup (core/hardware/src/gpus.cpp findGpu): the names users type and the names the tools
// print for the same board (nvidia-smi, torch.cuda.get_device_name(), a cloud's instance tables) reach the same
// preset; a board no preset holds is refused, never matched to a neighbour of another size.
#include "headroom/hardware/gpus.h"

#include <QTest>

using namespace headroom;

class TestGpus : public QObject
{
    Q_OBJECT

private slots:
    void lookup_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("preset"); // empty: no preset
        QTest::newRow("short") << "4090"
                               << "GeForce RTX 4090 24 GB";
        QTest::newRow("rtx") << "RTX 3090"
                             << "GeForce RTX 3090 24 GB";
        QTest::newRow("smi-geforce") << "NVIDIA GeForce RTX 4090"
                                     << "GeForce RTX 4090 24 GB";
        QTest::newRow("smi-tesla") << "Tesla T4"
                                   << "Tesla T4 16 GB";
        QTest::newRow("v100-default") << "v100"
                                      << "Tesla V100 16 GB";
        QTest::newRow("torch-v100-sxm2-32") << "Tesla V100-SXM2-32GB"
                                            << "Tesla V100 32 GB";
        QTest::newRow("a100-default") << "A100"
                                      << "A100 40 GB";
        QTest::newRow("a100-80") << "a100-80"
                                 << "A100 80 GB";
        QTest::newRow("torch-a100-sxm4-80") << "NVIDIA A100-SXM4-80GB"
                                            << "A100 80 GB";
        QTest::newRow("torch-a100-sxm4-40") << "NVIDIA A100-SXM4-40GB"
                                            << "A100 40 GB";
        QTest::newRow("torch-h100-hbm3") << "NVIDIA H100 80GB HBM3"
                                         << "H100 80 GB";
        QTest::newRow("h100-pcie") << "NVIDIA H100 PCIe"
                                   << "H100 80 GB";
        QTest::newRow("h200") << "NVIDIA H200"
                              << "H200 141 GB";
        // AWS's g5 instances: the A10G
        QTest::newRow("a10g") << "A10G"
                              << "A10 24 GB";
        QTest::newRow("smi-a10g") << "NVIDIA A10G"
                                  << "A10 24 GB";
        QTest::newRow("a10") << "A10"
                             << "A10 24 GB";
        QTest::newRow("l4-not-l40s") << "L4"
                                     << "L4 24 GB";
        QTest::newRow("l40s") << "NVIDIA L40S"
                              << "L40S 48 GB";
        // workstation boards, as nvidia-smi names them and as users shorten them
        QTest::newRow("smi-a6000") << "NVIDIA RTX A6000"
                                   << "RTX A6000 48 GB";
        QTest::newRow("a5000") << "a5000"
                               << "RTX A5000 24 GB";
        QTest::newRow("a4000") << "RTX A4000"
                               << "RTX A4000 16 GB";
        QTest::newRow("smi-6000-ada") << "NVIDIA RTX 6000 Ada Generation"
                                      << "RTX 6000 Ada 48 GB";
        QTest::newRow("smi-quadro-8000") << "Quadro RTX 8000"
                                         << "Quadro RTX 8000 48 GB";
        QTest::newRow("smi-a30") << "NVIDIA A30"
                                 << "A30 24 GB";
        QTest::newRow("smi-5090") << "NVIDIA GeForce RTX 5090"
                                  << "GeForce RTX 5090 32 GB";
        QTest::newRow("3080") << "3080"
                              << "GeForce RTX 3080 10 GB";
        QTest::newRow("3080-ti-not-3080") << "RTX 3080 Ti"
                                          << "";
        QTest::newRow("4060") << "RTX 4060"
                              << "GeForce RTX 4060 8 GB";
        // 94 GB: no preset holds it, so no 80 GB answer
        QTest::newRow("h100-nvl") << "NVIDIA H100 NVL"
                                  << "";
        QTest::newRow("vendor-only") << "NVIDIA"
                                     << "";
        QTest::newRow("unknown") << "RTX 9999"
                                 << "";
        QTest::newRow("empty") << ""
                               << "";
    }
    void lookup()
    {
        QFETCH(QString, name);
        QFETCH(QString, preset);
        const std::optional<GpuSpec> g = findGpu(name.toStdString());
        if (preset.isEmpty()) {
            QVERIFY2(!g, qPrintable(name + " -> " + (g ? QString::fromStdString(g->name) : QString())));
            return;
        }
        QVERIFY2(g, qPrintable(name));
        QCOMPARE(QString::fromStdString(g->name), preset);
    }

    // The capacities PyTorch reports for the boards whose figure was found ("X.XX GiB total capacity",
    // rounded down to 10 MiB): the A10G's 22.19 GiB (vllm-project/vllm#372, ml.g5), the RTX 4090's 23.64.
    void capacities_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("gib");
        QTest::newRow("a10g") << "A10G" << 22.19;
        QTest::newRow("4090") << "4090" << 23.64;
        QTest::newRow("3090") << "3090" << 23.70;
        QTest::newRow("a6000") << "RTX A6000" << 47.54;
        QTest::newRow("a5000") << "RTX A5000" << 23.67;
        QTest::newRow("6000-ada") << "RTX 6000 Ada" << 44.43;
        QTest::newRow("5090") << "RTX 5090" << 31.37;
    }
    void capacities()
    {
        QFETCH(QString, name);
        QFETCH(double, gib);
        const std::optional<GpuSpec> g = findGpu(name.toStdString());
        QVERIFY(g);
        const double reported = gib * 1024 * 1024 * 1024;
        QVERIFY(double(g->capacity) <= reported);
        QVERIFY(double(g->capacity) > reported - 10.0 * 1024 * 1024);
    }
};

QTEST_APPLESS_MAIN(TestGpus)
#include "tst_gpus.moc"
