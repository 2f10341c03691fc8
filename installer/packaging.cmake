# CPack DEB: headroom (GUI), headroom-cli, headroom-probe (when CUDA was found; installed by app/probe), the
# desktop entry, the icon, the application/x-onnx MIME type (so double-clicking a .onnx opens Headroom),
# the AppStream metainfo and the bundled sample models.
#   cmake --build build/release && cd build/release && cpack -G DEB
#   sudo apt install ./headroom_<version>_<arch>.deb
# Desktop and MIME caches are refreshed by the dpkg triggers of desktop-file-utils and shared-mime-info;
# the package needs no maintainer scripts.
set(HEADROOM_RESOURCES ${PROJECT_SOURCE_DIR}/resources)

if(HEADROOM_GUI)
  install(FILES ${HEADROOM_RESOURCES}/headroom.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${HEADROOM_RESOURCES}/headroom.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
  file(GLOB HEADROOM_ICON_SIZES LIST_DIRECTORIES true ${HEADROOM_RESOURCES}/icons/*)
  foreach(dir ${HEADROOM_ICON_SIZES})
    if(EXISTS ${dir}/headroom.png)
      get_filename_component(size ${dir} NAME)
      install(FILES ${dir}/headroom.png DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
    endif()
  endforeach()
  install(FILES ${HEADROOM_RESOURCES}/io.github.headroom.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
endif()
# The MIME type also names .onnx files for the CLI-only package's file managers; harmless without the GUI.
install(FILES ${HEADROOM_RESOURCES}/headroom-onnx.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages)
file(GLOB HEADROOM_SAMPLES ${HEADROOM_RESOURCES}/samples/*.onnx)
install(FILES ${HEADROOM_SAMPLES} DESTINATION ${CMAKE_INSTALL_DATADIR}/headroom/samples)

# The licence: Headroom links QCustomPlot (GPL-3.0), so the program it ships is GPL-3.0-or-later; Debian puts the
# text at /usr/share/doc/<package>/copyright.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/headroom RENAME copyright)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME headroom)
set(CPACK_PACKAGE_VENDOR "Headroom")
set(CPACK_PACKAGE_CONTACT "Headroom maintainers <headroom@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU memory predictor for ONNX models (desktop app and CLI)")
set(CPACK_PACKAGE_DESCRIPTION
    "Headroom opens any ONNX model and accounts for the GPU memory training or inference needs: weights, "
    "gradients, optimizer states, the activations autograd saves, the peak over one iteration and the CUDA "
    "caching allocator. It includes the Qt desktop application, the headless headroom-cli and, when built "
    "with CUDA, headroom-probe, which checks the prediction on a real GPU.")
string(JOIN "" CPACK_PACKAGE_DESCRIPTION ${CPACK_PACKAGE_DESCRIPTION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Library dependencies (Qt 6, QCustomPlot, ONNX, protobuf, libstdc++) come from dpkg-shlibdeps; what it
# cannot see is listed: Qt's platform plugins are loaded at run time.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(HEADROOM_GUI)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins")
  # Chinese text in the UI and the PDF report needs a CJK font; Qt's own strings come from the l10n package.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-noto-cjk, qt6-translations-l10n, shared-mime-info, desktop-file-utils")
endif()
# The probe needs an NVIDIA driver at run time (libcuda is opened by the statically linked CUDA runtime).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nvidia-driver")
set(CPACK_SOURCE_IGNORE_FILES "/build/;/\\\\.git/")
include(CPack)
