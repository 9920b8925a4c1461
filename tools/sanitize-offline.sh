#!/usr/bin/env bash
# tools/sanitize.sh on a machine that has a compiler, CMake and Ninja but cannot install packages (the device
# machine: 16 cores, no network): the build dependencies come as Debian packages fetched here and extracted there.
#
#   tools/sanitize-offline.sh fetch DIR          here: download the packages into DIR (inside the repository, so
#                                                 that the device tool copies it with the working tree)
#   tools/sanitize-offline.sh run DIR KIND [OUT [OPTIONS...]]  there: extract them under /tmp/deps, run
#                                                 tools/sanitize.sh KIND (address|thread) [OPTIONS...] with 16 jobs,
#                                                 tar the logs into OUT (default .)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mode=${1:?usage: $0 fetch DIR | run DIR KIND [OUT]}
dir=${2:?usage: $0 fetch DIR | run DIR KIND [OUT]}
case $mode in
  fetch)
    mkdir -p "$dir" && cd "$dir" &&
      apt-get download libfmt-dev libfmt9 libgtest-dev libgmock-dev googletest libbenchmark-dev libbenchmark1debian \
        libzstd-dev libzstd1 liblz4-dev liblz4-1 libcli11-dev pkgconf pkgconf-bin libpkgconf3
    ;;
  run)
    kind=${3:?KIND: address or thread}
    out=${4:-.}
    deps=/tmp/deps
    mkdir -p "$deps" /tmp/sanitize-bin
    for d in "$dir"/*.deb; do dpkg -x "$d" "$deps"; done
    sed -i "s|^prefix=.*|prefix=$deps/usr|" "$deps"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc
    # sanitize.sh builds through ccache; without one, the compiler itself
    command -v ccache >/dev/null || { printf '#!/bin/sh\nexec "$@"\n' >/tmp/sanitize-bin/ccache; }
    printf '#!/bin/sh\nexec env LD_LIBRARY_PATH=%s/usr/lib/x86_64-linux-gnu %s/usr/bin/pkgconf "$@"\n' "$deps" "$deps" \
      >/tmp/sanitize-bin/pkg-config
    chmod +x /tmp/sanitize-bin/*
    export PATH=/tmp/sanitize-bin:$PATH PKG_CONFIG=/tmp/sanitize-bin/pkg-config
    export PKG_CONFIG_PATH=$deps/usr/lib/x86_64-linux-gnu/pkgconfig CMAKE_PREFIX_PATH=$deps/usr
    export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    CUEMU_SANITIZE_JOBS=${CUEMU_SANITIZE_JOBS:-16} tools/sanitize.sh "$kind" "${@:5}"
    rc=$?
    tar -czf "$out/$kind-logs.tgz" build-*/sanitize-logs build-*/sanitize-build.log 2>/dev/null
    exit $rc
    ;;
  *) echo "usage: $0 fetch DIR | run DIR KIND [OUT]" >&2; exit 2 ;;
esac
