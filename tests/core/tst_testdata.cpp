// Every model.onnx of Debian's libonnx-testdata loads without a crash or hang (errors must be clean).
#include "headroom/base/error.h"
#include "headroom/load/loader.h"
#include "headroom/shapes/shapes.h"

#include <QtTest>

#include <filesystem>

using namespace headroom;

class TestTestdata : public QObject
{
    Q_OBJECT
private slots:
    void all()
    {
        const std::filesystem::path root("/usr/share/libonnx-testdata/data");
        if (!std::filesystem::is_directory(root))
            QSKIP("libonnx-testdata is not installed (/usr/share/libonnx-testdata/data)");
        int loaded = 0, errors = 0;
        int64_t unknown = 0;
        std::vector<std::filesystem::path> files;
        for (const auto& e : std::filesystem::recursive_directory_iterator(root))
            if (e.is_regular_file() && e.path().filename() == "model.onnx")
                files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& p : files) {
            try {
                const Model m = loadModel(p.string());
                const ShapeTable st = evaluateShapes(m, m.defaultBindings());
                unknown += st.unknown;
                ++loaded;
            } catch (const Error& e) {
                const std::string msg = e.what();
                QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
                QVERIFY2(msg.rfind(p.string() + ": ", 0) == 0, msg.c_str());
                ++errors;
            }
        }
        qInfo("%d models loaded, %d clean errors, %lld activations of unknown size", loaded, errors,
              static_cast<long long>(unknown));
        QVERIFY(loaded > 1000);
    }
};

QTEST_APPLESS_MAIN(TestTestdata)
#include "tst_testdata.moc"
