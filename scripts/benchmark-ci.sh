#!/usr/bin/env bash
# The steps of the v8inline GitHub Action (action.yml): records a benchmark
# command at the pull request's base (in a git worktree) and at its head,
# compares the two recordings, writes the comparison to the job summary and
# its annotations to the log, and fails on a regression when asked.
#
# Inputs, as action.yml passes them (environment variables):
#   V8INLINE_RUN                 the benchmark command (bash), e.g. `npm run bench` (required)
#   V8INLINE_WORKING_DIRECTORY   where to run it, relative to the repository root (default .)
#   V8INLINE_INSTALL             run before it in each tree (default `npm ci`; empty: nothing)
#   V8INLINE_BASE_REF            the base to compare with (default: the pull request's base
#                                branch, GITHUB_BASE_REF, fetched from origin if missing)
#   V8INLINE_FAIL_ON_REGRESSION  true: exit 1 when compare finds a regression
#   V8INLINE_SETUP_PERF          true: install perf (linux-tools) and allow it (the Action)
#   V8INLINE_BINARY              a v8inline binary to run instead of `npx v8inline@VERSION`,
#                                VERSION being this repository's (Cargo.toml)
# and GitHub's: GITHUB_WORKSPACE (the checkout; default the working directory),
# GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_TEMP.
#
# Writes RUNNER_TEMP/v8inline-recordings/{base,head} (`v8inline record`'s
# directories) and the output `recordings` (that directory) for the upload.
# Exit status: 0; 1 a regression (with V8INLINE_FAIL_ON_REGRESSION=true);
# otherwise the failing step's (the benchmark at head, compare, setup).
set -euo pipefail

action_root=$(cd "$(dirname "$0")/.." && pwd)
run=${V8INLINE_RUN:?V8INLINE_RUN: the benchmark command (the input run) is required}
working_directory=${V8INLINE_WORKING_DIRECTORY:-.}
install=${V8INLINE_INSTALL-npm ci}
base_ref=${V8INLINE_BASE_REF:-${GITHUB_BASE_REF:-}}
fail_on_regression=${V8INLINE_FAIL_ON_REGRESSION:-false}
workspace=${GITHUB_WORKSPACE:-$PWD}
summary=${GITHUB_STEP_SUMMARY:-/dev/null}
outputs=${GITHUB_OUTPUT:-/dev/null}
temp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}

# Workflow commands (https://docs.github.com/actions/reference/workflow-commands-for-github-actions):
# % and line breaks escaped in the message.
escape() { local text=${1//%/%25}; text=${text//$'\r'/%0D}; printf '%s' "${text//$'\n'/%0A}"; }
error() { echo "::error title=v8inline benchmark::$(escape "$1")"; }
warning() { echo "::warning title=v8inline benchmark::$(escape "$1")"; }

v8inline() {
  if [ -n "${V8INLINE_BINARY:-}" ]; then
    "$V8INLINE_BINARY" "$@"
  else
    local version
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_root/Cargo.toml" | head -1)
    npx --yes "v8inline@$version" "$@"
  fi
}

case "$fail_on_regression" in
  true | false) ;;
  *) error "fail-on-regression must be true or false, not '$fail_on_regression'"; exit 2 ;;
esac

repository=$(git -C "$workspace" rev-parse --show-toplevel) || {
  error "$workspace is not a git checkout (actions/checkout first)"
  exit 2
}
[ -d "$repository/$working_directory" ] || {
  error "working-directory $working_directory: no such directory in $repository"
  exit 2
}

if [ "${V8INLINE_SETUP_PERF:-false}" = true ]; then
  echo "::group::perf"
  # perf for the runner's kernel (linux-tools-$(uname -r)), and permission to
  # sample (perf_event_paranoid; kptr_restrict for kernel symbols).
  if ! command -v perf >/dev/null 2>&1 || ! perf --version >/dev/null 2>&1; then
    sudo apt-get update -qq &&
      sudo apt-get install -y -qq linux-tools-common "linux-tools-$(uname -r)" >/dev/null ||
      warning "perf could not be installed: v8inline records with V8's own sampler instead (counts are ticks)"
  fi
  sudo sysctl -q -w kernel.perf_event_paranoid=-1 kernel.kptr_restrict=0 ||
    warning "could not set kernel.perf_event_paranoid: perf may not be allowed to record"
  echo "::endgroup::"
fi

# The base commit: the ref as given, or fetched (a shallow checkout has only the head).
if [ -z "$base_ref" ]; then
  error "no base to compare with: set the input base-ref (GITHUB_BASE_REF is set only for pull_request events)"
  exit 2
fi
if ! base_commit=$(git -C "$repository" rev-parse --verify --quiet "$base_ref^{commit}"); then
  echo "fetching $base_ref from origin"
  git -C "$repository" fetch --quiet --no-tags --depth=1 origin "$base_ref" &&
    base_commit=$(git -C "$repository" rev-parse --verify FETCH_HEAD) || {
    error "base-ref $base_ref: neither a commit here nor fetchable from origin"
    exit 2
  }
fi

recordings=$temp/v8inline-recordings
base_tree=$temp/v8inline-base-tree
rm -rf "$recordings"
mkdir -p "$recordings"
git -C "$repository" worktree remove --force "$base_tree" >/dev/null 2>&1 || rm -rf "$base_tree"
git -C "$repository" worktree add --quiet --detach "$base_tree" "$base_commit"
trap 'git -C "$repository" worktree remove --force "$base_tree" >/dev/null 2>&1 || true' EXIT
echo "recordings=$recordings" >>"$outputs"

# Installs and records in one tree; its status is the failing step's, named
# in failed_step and failed_command. (Each step is a subshell with `&&`:
# errexit does not apply inside `( ... ) || status=$?`.)
failed_step= failed_command=
record() {
  local side=$1 tree=$2 status=0
  echo "::group::$side: $run ($(git -C "$tree" rev-parse --short HEAD))"
  if [ -n "$install" ]; then
    (cd "$tree/$working_directory" && bash -c "$install") || status=$?
    failed_step=install failed_command=$install
  fi
  if [ "$status" -eq 0 ]; then
    (cd "$tree/$working_directory" && v8inline record --output-dir "$recordings/$side" -- bash -c "$run") ||
      status=$?
    failed_step=benchmark failed_command=$run
  fi
  echo "::endgroup::"
  return "$status"
}

base_status=0
record base "$base_tree" || base_status=$?
base_failed_step=$failed_step base_failed_command=$failed_command
head_status=0
record head "$repository" || head_status=$?
if [ "$head_status" -ne 0 ]; then
  error "the $failed_step failed at head (exit $head_status): \`$failed_command\`"
  exit "$head_status"
fi
if [ "$base_status" -ne 0 ]; then
  # A benchmark the pull request adds: nothing to compare with.
  warning "the $base_failed_step failed at base $base_ref (exit $base_status): nothing to compare"
  printf '### v8inline\n\nThe %s `%s` failed at base %s (exit %s): nothing to compare.\n' \
    "$base_failed_step" "$base_failed_command" "$base_ref" "$base_status" >>"$summary"
  exit 0
fi

# Annotations name files relative to the repository root, as GitHub wants
# them (whatever the working directory).
cd "$repository"
compare() { v8inline compare "$recordings/base" "$recordings/head" --source-root "$repository" "$@"; }
comparison=$recordings/comparison.md
compare --format markdown -o "$comparison"
cat "$comparison" >>"$summary"
if [ "$fail_on_regression" = true ]; then
  status=0
  compare --format github --fail-on-regression || status=$?
  case "$status" in
    0) ;;
    1) error "a regression beyond noise against $base_ref (fail-on-regression): see the job summary"; exit 1 ;;
    *) error "v8inline compare failed (exit $status)"; exit "$status" ;;
  esac
else
  compare --format github
fi
