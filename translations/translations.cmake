# Translations, as Heimer does them: translations/headroom_<lang>.ts are compiled by lrelease into
# headroom_ui's resources under :/i18n, where LanguageService loads them (with Qt's own catalogue).
# Refresh the sources after changing strings:
#   lupdate app/gui -ts translations/headroom_zh_CN.ts -no-obsolete -locations none
file(GLOB HEADROOM_TS_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/translations/headroom_*.ts)
qt_add_translations(headroom_ui
  TS_FILES ${HEADROOM_TS_FILES}
  RESOURCE_PREFIX /i18n
  LUPDATE_OPTIONS -no-obsolete -locations none)
