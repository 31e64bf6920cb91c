#!/usr/bin/env bash
# Installs the Debian 12 packages toolvfs needs to build, test and benchmark,
# and only those that are missing. Safe to run again; says what it installs.
#
#   scripts/install-deps.sh          build + test dependencies (ripgrep: grep's
#                                    differential test runs the real rg;
#                                    dpkg-dev and man-db: the install test
#                                    builds the .debs and renders the man page)
#   scripts/install-deps.sh --bench  also what the benchmarks compare against
#   scripts/install-deps.sh --fuzz   also clang and libFuzzer
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  libre2-dev libcli11-dev libtomlplusplus-dev rapidjson-dev libsimdjson-dev
  libcurl4-openssl-dev libidn2-dev libseccomp-dev libsqlite3-dev libssl-dev nettle-dev
  libpq-dev postgresql
  libcpp-httplib-dev
  python3 nodejs
  ripgrep
  dpkg-dev man-db
)
# The MCP client tests run the reference servers with node
# (scripts/install-mcp-servers.sh). Some nodejs builds bring npm along;
# Debian's splits it out.
command -v npm >/dev/null || packages+=(npm)
case "${1:-}" in
  --bench) packages+=(hyperfine python3 nlohmann-json3-dev bubblewrap) ;;
  --fuzz) packages+=(clang libclang-rt-14-dev) ;;
esac

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists; an old list may lack a package.
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
