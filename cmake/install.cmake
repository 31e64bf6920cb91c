# Installing and packaging toolvfs (issue 22, docs/install.md):
#   - the `toolvfs` binary, its man page and shell completions;
#   - the SDKs in share/toolvfs/sdk (found there at run time, see
#     src/runtime/sdk_location.h), the C++ SDK headers as <toolvfs/tool.h>
#     and <toolvfs/vfsd_client.h>, the Python SDK importable by python3;
#   - libtoolvfs.so with its public headers under include/toolvfs/, a CMake
#     package (find_package(toolvfs) -> toolvfs::toolvfs) and a pkg-config
#     file;
#   - `make package`: two .debs from CPack, toolvfs and libtoolvfs-dev.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# --- libtoolvfs --------------------------------------------------------------
# One shared library made of every layer below the command line, so that an
# embedder links one thing; the layers stay static libraries inside the
# build (the binary and the tests link those).
set(TOOLVFS_LIBRARY_LAYERS
  toolvfs_core toolvfs_project toolvfs_config toolvfs_protocol toolvfs_policy
  toolvfs_sandbox toolvfs_session toolvfs_host toolvfs_runtime toolvfs_mcp toolvfs_mcp_http_transport toolvfs_vfsd)
add_library(toolvfs_library SHARED src/toolvfs.cc)
# Every object of every layer goes in (--whole-archive), not only what
# src/toolvfs.cc pulls: the library is for callers we do not know. CMake's
# $<LINK_LIBRARY:WHOLE_ARCHIVE> refuses a layer that also comes in again
# as another layer's dependency, hence the linker flags; the layers'
# own dependencies (RE2, SQLite, libpq, …) follow as usual.
target_link_libraries(toolvfs_library PRIVATE toolvfs_base
  -Wl,--whole-archive ${TOOLVFS_LIBRARY_LAYERS} -Wl,--no-whole-archive)
target_compile_features(toolvfs_library INTERFACE cxx_std_20)
target_include_directories(toolvfs_library INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/toolvfs>)
set_target_properties(toolvfs_library PROPERTIES
  OUTPUT_NAME toolvfs
  EXPORT_NAME toolvfs
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)

# The public headers: src/toolvfs.h and what it includes, transitively.
# tests/install/install_test.sh compiles each installed header on its own,
# so a header missing from this list fails there.
set(TOOLVFS_PUBLIC_HEADERS
  config/config.h config/config_value.h
  core/memory_budget.h core/status.h core/unique_fd.h core/url.h
  host/access_gate.h host/cancel_token.h host/methods.h host/tool_reports.h host/tool_session.h
  policy/audit.h policy/command_policy.h policy/decision.h policy/file_policy.h
  policy/inquirer.h policy/network_policy.h policy/path_glob.h policy/tool_policy.h
  project/project_files.h
  protocol/json_writer.h protocol/jsonrpc.h protocol/wire_errors.h
  runtime/builtin_runtime.h runtime/confined_launch.h runtime/mcp_client.h
  runtime/mcp_runtime.h runtime/sdk_location.h runtime/stdio_runtime.h
  runtime/tool_runtime.h runtime/vfs_runtime.h
  sandbox/kernel_features.h sandbox/landlock.h sandbox/launcher.h sandbox/mount_masks.h sandbox/namespaces.h
  sandbox/private_temp_dir.h sandbox/process_cgroup.h sandbox/resource_limits.h
  sandbox/sandbox_profile.h sandbox/seccomp_filter.h sandbox/tool_access.h)
foreach(header IN LISTS TOOLVFS_PUBLIC_HEADERS)
  get_filename_component(area ${header} DIRECTORY)
  install(FILES src/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/toolvfs/${area} COMPONENT development)
endforeach()
install(FILES src/toolvfs.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/toolvfs COMPONENT development)

install(TARGETS toolvfs_library EXPORT toolvfsTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development)
set(TOOLVFS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/toolvfs)
install(EXPORT toolvfsTargets NAMESPACE toolvfs:: DESTINATION ${TOOLVFS_CMAKE_DIR} COMPONENT development)
configure_package_config_file(cmake/toolvfsConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/toolvfsConfig.cmake INSTALL_DESTINATION ${TOOLVFS_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/toolvfsConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/toolvfsConfig.cmake ${PROJECT_BINARY_DIR}/cmake/toolvfsConfigVersion.cmake
  DESTINATION ${TOOLVFS_CMAKE_DIR} COMPONENT development)
file(RELATIVE_PATH TOOLVFS_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(cmake/toolvfs.pc.in ${PROJECT_BINARY_DIR}/toolvfs.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/toolvfs.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

# --- the binary, the SDKs, man page and completions ---------------------------
install(TARGETS toolvfs RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS toolvfs_mcp_http RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/toolvfs COMPONENT runtime)
install(DIRECTORY ${PROJECT_BINARY_DIR}/share/toolvfs/sdk DESTINATION ${CMAKE_INSTALL_DATADIR}/toolvfs COMPONENT runtime)
install(FILES sdk/toolvfs/tool.h sdk/toolvfs/vfsd_client.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/toolvfs COMPONENT development)
# python3 imports toolvfs_tool from share/toolvfs/sdk through a .pth file in
# the directory Debian's python3 searches for packaged modules (overridable:
# -DTOOLVFS_INSTALL_PYTHONDIR=...).
set(TOOLVFS_INSTALL_PYTHONDIR lib/python3/dist-packages CACHE STRING "Where python3 finds toolvfs.pth")
install(CODE "
  set(sdk \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/toolvfs/sdk\")
  file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${TOOLVFS_INSTALL_PYTHONDIR}/toolvfs.pth\" \"\${sdk}\\n\")
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${TOOLVFS_INSTALL_PYTHONDIR}/toolvfs.pth\")"
  COMPONENT runtime)

# Generated by the binary from its own command-line description, so they
# never disagree with --help (src/cli/cli_reference.h).
set(TOOLVFS_GENERATED ${PROJECT_BINARY_DIR}/generated)
add_custom_command(
  OUTPUT ${TOOLVFS_GENERATED}/toolvfs.1 ${TOOLVFS_GENERATED}/toolvfs.bash ${TOOLVFS_GENERATED}/_toolvfs
  COMMAND ${CMAKE_COMMAND} -E make_directory ${TOOLVFS_GENERATED}
  COMMAND toolvfs generate man > ${TOOLVFS_GENERATED}/toolvfs.1
  COMMAND toolvfs generate bash > ${TOOLVFS_GENERATED}/toolvfs.bash
  COMMAND toolvfs generate zsh > ${TOOLVFS_GENERATED}/_toolvfs
  DEPENDS toolvfs
  COMMENT "Generating the man page and shell completions")
add_custom_target(toolvfs_reference ALL DEPENDS
  ${TOOLVFS_GENERATED}/toolvfs.1 ${TOOLVFS_GENERATED}/toolvfs.bash ${TOOLVFS_GENERATED}/_toolvfs)
install(FILES ${TOOLVFS_GENERATED}/toolvfs.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
install(FILES ${TOOLVFS_GENERATED}/toolvfs.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME toolvfs COMPONENT runtime)
install(FILES ${TOOLVFS_GENERATED}/_toolvfs DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT runtime)

# --- make package: .debs -------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME toolvfs)
set(CPACK_PACKAGE_VENDOR "toolvfs")
set(CPACK_PACKAGE_CONTACT "toolvfs developers <toolvfs@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Runs the tools of LLM agents through a policy-checked, audited project store")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# dpkg-shlibdeps finds the shared libraries' packages (libre2-9, libsqlite3-0, …).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME toolvfs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "python3")
# Opened with dlopen on first use, so dpkg-shlibdeps does not see them
# (src/core/lazy_library.h): the http.* methods, PostgreSQL and sqlite:
# stores, their content hashes, URLs' host names.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libcurl4, libpq5, libsqlite3-0, libnettle8, libidn2-0")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libtoolvfs-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
# The public headers include RapidJSON's (protocol/jsonrpc.h).
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "toolvfs (= ${PROJECT_VERSION}), rapidjson-dev")
set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS runtime)
include(CPack)
