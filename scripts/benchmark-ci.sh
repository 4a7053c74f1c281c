#!/usr/bin/env bash
# The steps of the v8inline GitHub Action (action.yml): runs a benchmark
# command at the pull request's base (in a git worktree) and at its head with
# `v8inline bench` (rounds of both, in a random order each, until every
# benchmark is decided or the budget is spent), writes the comparison to the
# job summary and its annotations to the log, and fails on a regression when
# asked.
#
# Inputs, as action.yml passes them (environment variables):
#   V8INLINE_RUN                 the benchmark command (bash), e.g. `npm run bench` (required)
#   V8INLINE_WORKING_DIRECTORY   where to run it, relative to the repository root (default .)
#   V8INLINE_INSTALL             run before it in each tree (default `npm ci`; empty: nothing)
#   V8INLINE_BASE_REF            the base to compare with (default: the pull request's base
#                                branch, GITHUB_BASE_REF, fetched from origin if missing)
#   V8INLINE_FAIL_ON_REGRESSION  true: exit 1 when compare finds a regression
#   V8INLINE_MIN_ROUNDS          bench's --min-rounds (default: bench's, 3)
#   V8INLINE_MAX_ROUNDS          bench's --max-rounds (default: bench's, 30)
#   V8INLINE_MAX_TIME            bench's --max-time (default: bench's, 3m)
#   V8INLINE_SCHEDULE            bench's --schedule, duet or interleaved (default: bench's)
#   V8INLINE_SETUP_PERF          true: install perf (linux-tools) and allow it (the Action)
#   V8INLINE_BINARY              a v8inline binary to run instead of `npx v8inline@VERSION`,
#                                VERSION being this repository's (Cargo.toml)
#   V8INLINE_MERGE               instead of benchmarking: globs (relative to the workspace) of
#                                the recordings directories of several bench jobs (a matrix,
#                                downloaded by actions/download-artifact), judged as one with
#                                `v8inline compare --merge`: summary, annotations, gate
# and GitHub's: GITHUB_WORKSPACE (the checkout; default the working directory),
# GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_TEMP.
#
# Writes RUNNER_TEMP/v8inline-recordings (`v8inline bench`'s directory: base/
# and head/ with every run's recording, bench.json, report.html with the
# flame graphs it shows, comparison.md, whose last line names report.html)
# and the output `recordings` (that directory) for the upload, and `base-commit`.
# Exit status: 0; 1 a regression (with V8INLINE_FAIL_ON_REGRESSION=true);
# otherwise the failing step's (the benchmark at head, compare, setup).
set -euo pipefail

action_root=$(cd "$(dirname "$0")/.." && pwd)
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

# shellcheck source=v8inline-command.sh
. "$action_root/scripts/v8inline-command.sh"

case "$fail_on_regression" in
  true | false) ;;
  *) error "fail-on-regression must be true or false, not '$fail_on_regression'"; exit 2 ;;
esac

repository=$(git -C "$workspace" rev-parse --show-toplevel) || {
  error "$workspace is not a git checkout (actions/checkout first)"
  exit 2
}

# The merge job of a matrix: every bench job's recordings judged as one.
if [ -n "${V8INLINE_MERGE:-}" ]; then
  shopt -s nullglob
  cd "$workspace"
  merged=()
  # shellcheck disable=SC2206 # the input is globs, split on spaces, expanded here
  for directory in $V8INLINE_MERGE; do
    [ -f "$directory/base/runs.json" ] && [ -f "$directory/head/runs.json" ] && merged+=("$(cd "$directory" && pwd)")
  done
  if [ "${#merged[@]}" -lt 2 ]; then
    error "merge '$V8INLINE_MERGE': ${#merged[@]} bench recordings found (directories with base/ and head/), 2 or more needed"
    exit 2
  fi
  echo "merging ${#merged[@]} bench outputs: ${merged[*]}"
  gate=()
  [ "$fail_on_regression" = false ] || gate=(--fail-on-regression)
  comparison=$temp/v8inline-merged.md
  cd "$repository"
  status=0
  v8inline compare --merge "${merged[@]}" --source-root "$repository" --format markdown -o "$comparison" \
    "${gate[@]}" || status=$?
  case "$status" in
    0 | 1) ;;
    *) error "v8inline compare --merge failed (exit $status)"; exit "$status" ;;
  esac
  cat "$comparison" >>"$summary"
  v8inline compare --merge "${merged[@]}" --source-root "$repository" --format github
  if [ "$status" -eq 1 ]; then
    error "a regression beyond noise (fail-on-regression): see the job summary"
    exit 1
  fi
  exit 0
fi
run=${V8INLINE_RUN:?V8INLINE_RUN: the benchmark command (the input run) is required}
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
echo "base-commit=$base_commit" >>"$outputs"

# Installs in one tree; its status is the install's.
install_in() {
  local side=$1 tree=$2 status=0
  if [ -n "$install" ]; then
    echo "::group::$side: $install ($(git -C "$tree" rev-parse --short HEAD))"
    (cd "$tree/$working_directory" && bash -c "$install") || status=$?
    echo "::endgroup::"
  fi
  return "$status"
}
nothing_to_compare() {
  # A benchmark the pull request adds: nothing to compare with.
  warning "the $1 failed at base $base_ref (exit $2): nothing to compare"
  printf '### v8inline\n\nThe %s `%s` failed at base %s (exit %s): nothing to compare.\n' "$1" "$3" "$base_ref" "$2" >>"$summary"
  exit 0
}

base_status=0
install_in base "$base_tree" || base_status=$?
head_status=0
install_in head "$repository" || head_status=$?
if [ "$head_status" -ne 0 ]; then
  error "the install failed at head (exit $head_status): \`$install\`"
  exit "$head_status"
fi
[ "$base_status" -eq 0 ] || nothing_to_compare install "$base_status" "$install"

budget=()
[ -z "${V8INLINE_MIN_ROUNDS:-}" ] || budget+=(--min-rounds "$V8INLINE_MIN_ROUNDS")
[ -z "${V8INLINE_MAX_ROUNDS:-}" ] || budget+=(--max-rounds "$V8INLINE_MAX_ROUNDS")
[ -z "${V8INLINE_MAX_TIME:-}" ] || budget+=(--max-time "$V8INLINE_MAX_TIME")
[ -z "${V8INLINE_SCHEDULE:-}" ] || budget+=(--schedule "$V8INLINE_SCHEDULE")
gate=()
[ "$fail_on_regression" = false ] || gate=(--fail-on-regression)
comparison=$recordings/comparison.md
# Annotations name files relative to the repository root, as GitHub wants
# them (whatever the working directory).
cd "$repository"
echo "::group::v8inline bench: $run"
status=0
v8inline bench --base "$base_tree/$working_directory" --head "$repository/$working_directory" \
  --output-dir "$recordings" --source-root "$repository" --format markdown -o "$comparison" \
  "${budget[@]}" "${gate[@]}" -- bash -c "$run" || status=$?
echo "::endgroup::"
# Where the benchmark failed, if it did (bench.json's `failed`).
failed_side=$(jq -r '.failed.side // empty' "$recordings/bench.json" 2>/dev/null || true)
case "$failed_side" in
  head) error "the benchmark failed at head (exit $status): \`$run\`"; exit "$status" ;;
  base) nothing_to_compare benchmark "$status" "$run" ;;
esac
case "$status" in
  0 | 1) ;;
  *) error "v8inline bench failed (exit $status)"; exit "$status" ;;
esac
cat "$comparison" >>"$summary"
# The annotations: compare of the runs bench left (the same verdicts).
v8inline compare "$recordings/base" "$recordings/head" --source-root "$repository" --format github
if [ "$status" -eq 1 ]; then
  error "a regression beyond noise against $base_ref (fail-on-regression): see the job summary"
  exit 1
fi
