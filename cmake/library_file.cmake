# toolvfs_library_soname(VARIABLE LIBRARY): the SONAME of the shared library
# file LIBRARY (e.g. libpq.so.5), what dlopen must ask for to get the same
# ABI the headers describe. For the libraries toolvfs opens on first use
# instead of linking (src/core/lazy_library.h, docs/install.md).
function(toolvfs_library_soname variable library)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${library} OUTPUT_VARIABLE dump RESULT_VARIABLE failed)
  string(REGEX MATCH "SONAME +([^\n ]+)" found "${dump}")
  if(failed OR NOT found)
    message(FATAL_ERROR "Cannot read the SONAME of ${library} with ${CMAKE_OBJDUMP}")
  endif()
  set(${variable} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()
