#!/usr/bin/env bash
# The history step of the v8inline GitHub Action (action.yml, input
# history-branch): on a push, adds the pushed commit's result (`v8inline
# bench`'s head side; on the first push also its base side, the commit before)
# to history.jsonl on a branch of the repository, writes the report beside it
# (index.html, a page GitHub Pages can serve, and report.json) and pushes the
# branch: the history stays in the repository, as github-action-benchmark keeps
# its results on gh-pages. docs/history.md describes the file and the report.
#
# Inputs, as action.yml passes them (environment variables):
#   V8INLINE_HISTORY_BRANCH   the branch (created, without history, when missing)
#   V8INLINE_RECORDINGS       bench's directory (base/ and head/ side directories)
#   V8INLINE_BASE_COMMIT      the base's commit (the benchmark step's output)
#   V8INLINE_BINARY           a v8inline binary to run instead of `npx v8inline@VERSION`
# and GitHub's: GITHUB_EVENT_NAME, GITHUB_SHA, GITHUB_WORKSPACE, RUNNER_TEMP.
# Exit status: 0 (also when the event is not a push: nothing to add); else the
# failing step's.
set -euo pipefail

action_root=$(cd "$(dirname "$0")/.." && pwd)
branch=${V8INLINE_HISTORY_BRANCH:?V8INLINE_HISTORY_BRANCH: the branch of the history is required}
recordings=${V8INLINE_RECORDINGS:?V8INLINE_RECORDINGS: the directory bench wrote is required}
base_commit=${V8INLINE_BASE_COMMIT:-}
workspace=${GITHUB_WORKSPACE:-$PWD}
temp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}

# shellcheck source=v8inline-command.sh
. "$action_root/scripts/v8inline-command.sh"

if [ "${GITHUB_EVENT_NAME:-push}" != push ]; then
  echo "v8inline history: a ${GITHUB_EVENT_NAME} event, not a push: nothing added"
  exit 0
fi
[ -d "$recordings/head" ] || {
  echo "::error title=v8inline history::no results in $recordings (the benchmark step did not run bench)"
  exit 1
}
repository=$(git -C "$workspace" rev-parse --show-toplevel)
head_commit=${GITHUB_SHA:-$(git -C "$repository" rev-parse HEAD)}
tree=$temp/v8inline-history-tree
trap 'git -C "$repository" worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT

# The branch as origin has it (or a new branch without history), the two
# results added, the report written, pushed; again from origin's branch when
# another job pushed in between.
for attempt in 1 2 3; do
  git -C "$repository" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"
  if git -C "$repository" fetch --quiet --no-tags origin "+refs/heads/$branch:refs/remotes/origin/$branch" 2>/dev/null; then
    git -C "$repository" worktree add --quiet --detach "$tree" "refs/remotes/origin/$branch"
  else
    git -C "$repository" worktree add --quiet --detach "$tree"
    git -C "$tree" checkout --quiet --orphan "v8inline-history-new"
    git -C "$tree" rm -rfq --ignore-unmatch .
  fi
  # git (the commits' dates) runs in the repository.
  cd "$repository"
  if [ -n "$base_commit" ] && [ -d "$recordings/base" ] &&
    ! grep -qF "\"commit\":\"$base_commit\"" "$tree/history.jsonl" 2>/dev/null; then
    v8inline history add --history "$tree" --commit "$base_commit" "$recordings/base"
  fi
  v8inline history add --history "$tree" --commit "$head_commit" "$recordings/head"
  v8inline history report --history "$tree" --format html -o "$tree/index.html"
  v8inline history report --history "$tree" --format json -o "$tree/report.json"
  git -C "$tree" add history.jsonl index.html report.json
  git -C "$tree" -c user.name="github-actions[bot]" \
    -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \
    commit --quiet -m "v8inline history: $head_commit"
  if git -C "$tree" push --quiet origin "HEAD:refs/heads/$branch"; then
    echo "v8inline history: $head_commit added to $branch"
    exit 0
  fi
  echo "v8inline history: the push to $branch was refused (attempt $attempt); again from origin's branch"
done
echo "::error title=v8inline history::could not push $branch"
exit 1
