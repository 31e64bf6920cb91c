#!/usr/bin/env bash
# install_test.sh SOURCE_DIR BUILD_DIR — see CMakeLists.txt here. Each check
# prints what it checks; the first failure ends the test with its reason.
set -euo pipefail
source_dir=$(cd "$1" && pwd)
build_dir=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/toolvfs-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "install_test: FAILED: $*" >&2; exit 1; }
check() { echo "install_test: $*"; }

# 1. Install into a staging prefix, stripped as a package would be.
prefix="$work/prefix"
cmake --install "$build_dir" --prefix "$prefix" --strip > "$work/install.log" || {
  cat "$work/install.log" >&2; fail "cmake --install"; }
libdir=lib
[[ -d "$prefix/lib" ]] || fail "no lib/ in the prefix"
for file in bin/toolvfs libexec/toolvfs/toolvfs-mcp-http "$libdir/libtoolvfs.so" "$libdir/libtoolvfs.so.0" \
    include/toolvfs/toolvfs.h include/toolvfs/tool.h include/toolvfs/vfsd_client.h \
    include/toolvfs/project/project_files.h "$libdir/cmake/toolvfs/toolvfsConfig.cmake" \
    "$libdir/cmake/toolvfs/toolvfsConfigVersion.cmake" "$libdir/pkgconfig/toolvfs.pc" \
    share/man/man1/toolvfs.1 share/bash-completion/completions/toolvfs share/zsh/vendor-completions/_toolvfs \
    share/toolvfs/sdk/toolvfs_tool.py share/toolvfs/sdk/toolvfs_vfsd.py share/toolvfs/sdk/toolvfs/tool.h \
    lib/python3/dist-packages/toolvfs.pth; do
  [[ -e "$prefix/$file" ]] || fail "not installed: $file"
done
check "installed files present"

# 2. Nothing of the source or build tree is baked into what was installed.
for file in "$prefix/bin/toolvfs" "$prefix/$libdir/libtoolvfs.so.0"; do
  if grep -aq -e "$source_dir" -e "$build_dir" "$file"; then
    fail "$(basename "$file") contains a path of the source or build tree: $(grep -ao -e "$source_dir[^[:cntrl:]]*" -e "$build_dir[^[:cntrl:]]*" "$file" | head -3 | tr '\n' ' ')"
  fi
done
check "no source or build path in the binary or the library"

# 3. Every installed header compiles on its own, with only the prefix's
# include directories (a header that needs one that was not installed fails).
while IFS= read -r header; do
  relative=${header#"$prefix/include/"}
  echo "#include <$relative>" | g++ -std=c++20 -fsyntax-only -x c++ - \
    -I"$prefix/include" -I"$prefix/include/toolvfs" 2> "$work/header.log" || {
    cat "$work/header.log" >&2; fail "installed header does not compile alone: $relative"; }
done < <(find "$prefix/include/toolvfs" -name '*.h' | sort)
check "every installed header compiles alone"

# 4. The completions and the man page are usable.
bash -c "source '$prefix/share/bash-completion/completions/toolvfs'; complete -p toolvfs" > /dev/null ||
  fail "the bash completion does not load"
if command -v man > /dev/null; then
  MANWIDTH=80 man -l "$prefix/share/man/man1/toolvfs.1" 2> "$work/man.log" | grep -q "toolvfs workspace" ||
    fail "man -l toolvfs.1 does not show the commands: $(head -3 "$work/man.log")"
fi
check "bash completion loads; man page renders"

# 5. A moved copy of the prefix still finds its SDK (nothing absolute), and
# a vfs tool in Python imports toolvfs_tool from it.
moved="$work/moved-prefix"
cp -a "$prefix" "$moved"
mkdir -p "$work/project/notes"
printf 'one two three\n' > "$work/project/notes/a.txt"
cat > "$work/count.py" <<'PY'
import sys, toolvfs_tool
def main(tool):
    return f"{len(tool.read(tool.arguments['path']).split())} words"
sys.exit(toolvfs_tool.tool_main(main))
PY
output=$(cd "$work" && env -u PYTHONPATH -u TOOLVFS_SDK_DIR "$moved/bin/toolvfs" exec --project "$work/project" \
  --no-audit --sandbox best-effort --args '{"path":"notes/a.txt"}' -- python3 count.py 2>&1) ||
  fail "the moved install could not run a Python vfs tool: $output"
[[ "$output" == *"3 words"* ]] || fail "unexpected output of the moved install: $output"
check "a moved install runs a Python vfs tool with its own SDK"
PYTHONPATH= python3 -c "import site; site.addsitedir('$prefix/lib/python3/dist-packages'); import toolvfs_tool" ||
  fail "toolvfs.pth does not make toolvfs_tool importable"
check "python3 imports toolvfs_tool through toolvfs.pth"

# ... and the installed example project, copied elsewhere, runs every tool
# of its toolvfs.toml with the moved install (its C++ tool in libexec/).
[[ -x "$moved/libexec/toolvfs/examples/todo_report" ]] || fail "not installed: libexec/toolvfs/examples/todo_report"
env -u PYTHONPATH -u TOOLVFS_SDK_DIR bash "$source_dir/tests/examples/example_project_test.sh" \
  "$moved/bin/toolvfs" "$moved/share/toolvfs/examples/project" > "$work/example.log" 2>&1 || {
  cat "$work/example.log" >&2; fail "the installed example project, copied elsewhere"; }
check "the installed example project runs every tool when copied elsewhere"

# 6. examples/embed, a separate CMake project, against the staged install.
cmake -S "$source_dir/examples/embed" -B "$work/embed" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/embed-configure.log" 2>&1 || { cat "$work/embed-configure.log" >&2; fail "configure examples/embed"; }
cmake --build "$work/embed" > "$work/embed-build.log" 2>&1 || { cat "$work/embed-build.log" >&2; fail "build examples/embed"; }
output=$("$work/embed/embed_example" 2>&1) || fail "embed_example failed: $output"
[[ "$output" == *"notes/plan.txt: 5 words"* ]] || fail "unexpected output of embed_example: $output"
check "examples/embed builds with find_package(toolvfs) and runs a vfs tool on a memory store"

# ... and with pkg-config instead of CMake.
flags=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs toolvfs) ||
  fail "pkg-config does not know toolvfs"
g++ -o "$work/embed_pkgconfig" "$source_dir/examples/embed/embed_example.cc" $flags -Wl,-rpath,"$prefix/$libdir" ||
  fail "embed_example does not build with pkg-config's flags: $flags"
cp "$source_dir/examples/embed/word_count.py" "$work/"
output=$("$work/embed_pkgconfig" 2>&1) || fail "embed_example (pkg-config build) failed: $output"
check "examples/embed builds with pkg-config"

# 7. The .debs: CPack builds them; their contents and dependencies.
(cd "$build_dir" && cpack -G DEB -B "$work/packages" > "$work/cpack.log" 2>&1) || {
  tail -20 "$work/cpack.log" >&2; fail "cpack -G DEB"; }
runtime_deb=$(ls "$work"/packages/toolvfs_*.deb)
dev_deb=$(ls "$work"/packages/libtoolvfs-dev_*.deb)
depends=$(dpkg-deb -f "$runtime_deb" Depends)
for needed in libre2 libsqlite3 libpq5 libseccomp libcurl libcpp-httplib libnettle8 libidn2; do
  [[ "$depends" == *"$needed"* ]] || fail "toolvfs.deb does not depend on $needed: $depends"
done
# Listed into files first: grep -q would close the pipe under dpkg-deb.
dpkg-deb -c "$runtime_deb" > "$work/runtime.contents"
dpkg-deb -c "$dev_deb" > "$work/dev.contents"
grep -q './usr/bin/toolvfs$' "$work/runtime.contents" || fail "toolvfs.deb has no /usr/bin/toolvfs"
grep -q './usr/share/toolvfs/sdk/toolvfs_tool.py$' "$work/runtime.contents" || fail "toolvfs.deb has no SDK"
grep -q './usr/include/toolvfs/toolvfs.h$' "$work/dev.contents" || fail "libtoolvfs-dev.deb has no headers"
grep -q './usr/lib/libtoolvfs.so.0.1.0$' "$work/runtime.contents" || fail "toolvfs.deb has no libtoolvfs.so.0"
[[ "$(dpkg-deb -f "$dev_deb" Depends)" == *"toolvfs (="* ]] || fail "libtoolvfs-dev does not depend on toolvfs"
# Unpacked into a scratch root (no dpkg database touched), the binary runs
# and finds the SDK under that root's /usr.
dpkg-deb -x "$runtime_deb" "$work/root"
"$work/root/usr/bin/toolvfs" --version | grep -q "toolvfs " || fail "the packaged binary does not run"
# `toolvfs mcp --http` runs the helper of ../libexec/toolvfs in its place
# (docs/install.md, "Libraries loaded on first use").
grep -q './usr/libexec/toolvfs/toolvfs-mcp-http$' "$work/runtime.contents" ||
  fail "toolvfs.deb has no /usr/libexec/toolvfs/toolvfs-mcp-http"
mkdir -p "$work/http" && : > "$work/http/toolvfs.toml"
(cd "$work/http" && timeout 5 "$work/root/usr/bin/toolvfs" mcp --no-audit --http 127.0.0.1:0 --project memory: \
  < /dev/null > /dev/null 2> "$work/http.err") || true
grep -q "listening on http://127.0.0.1:" "$work/http.err" ||
  fail "the packaged toolvfs mcp --http did not start its helper: $(cat "$work/http.err")"
check "the .debs hold the binary, its HTTP helper, SDK, headers, and declare their dependencies: $depends"
echo "install_test: ok"
