# ctest format: clang-format --dry-run --Werror over every C++ file of core/, app/ and tests/ (.clang-format
# at the root). A failure names each file; `clang-format -i FILE` fixes it.
file(GLOB_RECURSE files ${ROOT}/core/*.cpp ${ROOT}/core/*.h ${ROOT}/app/*.cpp ${ROOT}/app/*.h
     ${ROOT}/tests/*.cpp ${ROOT}/tests/*.h)
list(FILTER files EXCLUDE REGEX "/build/")
set(bad "")
foreach(f IN LISTS files)
  execute_process(COMMAND ${CLANG_FORMAT} --style=file --dry-run --Werror ${f}
                  WORKING_DIRECTORY ${ROOT} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    list(APPEND bad ${f})
  endif()
endforeach()
list(LENGTH files n)
if(bad)
  list(JOIN bad "\n  " list)
  message(FATAL_ERROR "clang-format would change:\n  ${list}\n(clang-format -i the files above)")
endif()
message(STATUS "format: ${n} files as clang-format writes them")
