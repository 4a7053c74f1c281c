# shellcheck shell=bash
# The `v8inline` the Action's scripts run (sourced by benchmark-ci.sh and
# benchmark-history.sh, after they set action_root): $V8INLINE_BINARY when
# set (the tests, a build of this checkout), else the npm package of the
# Action's own version, which ships the binary for the runner (npx).
v8inline() {
  if [ -n "${V8INLINE_BINARY:-}" ]; then
    "$V8INLINE_BINARY" "$@"
  else
    local version
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_root/Cargo.toml" | head -1)
    npx --yes "v8inline@$version" "$@"
  fi
}
