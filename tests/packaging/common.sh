# Shared by the packaging checks (sourced): `check NAME CONDITION` counts failures; `build_deb BUILD_DIR WORK` makes
# the Debian package of a build with CPack in WORK and sets `deb` to its path (empty when CPack failed, after
# printing the end of its log); `require_free_mb MB DIR` skips the check (exit 77) when DIR's file system has less free;
# `staged_mb BUILD_DIR` is about what staging that build's library and command three times takes (an install tree, the
# package's staging tree, the unpacked package).
failures=0
check() {
  if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; failures=$((failures + 1)); fi
}
build_deb() {
  local deb_dir=$2  # named: check() evaluates the condition in its own scope, where $2 is the condition
  (cd "$deb_dir" && cpack --config "$1/CPackConfig.cmake" -G DEB >"$deb_dir/cpack.log" 2>&1)
  deb=$(ls "$deb_dir"/cuemu_*.deb 2>/dev/null | head -1)
  check "cpack builds the Debian package" '[ -n "$deb" ] || { tail -20 "$deb_dir/cpack.log"; false; }'
}
require_free_mb() {
  local free
  free=$(df -P -BM "$2" | awk 'NR == 2 { sub("M", "", $4); print $4 }')
  if [ "${free:-0}" -lt "$1" ]; then
    echo "SKIP: ${free:-?} MB free under $2; this check needs about $1 MB"
    exit 77
  fi
}
staged_mb() {
  local bytes
  bytes=$(du -cbL "$1/emu/libcuda.so.1" "$1/emu/cuemu" 2>/dev/null | tail -1 | cut -f1)
  echo $((3 * ${bytes:-0} / 1048576 + 300))
}
