# Shared by the packaging checks (sourced): `check NAME CONDITION` counts failures; `build_deb BUILD_DIR WORK` makes
# the Debian package of a build with CPack in WORK and sets `deb` to its path (empty when CPack failed, after
# printing the end of its log).
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
