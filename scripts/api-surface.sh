#!/bin/sh
# api-surface.sh [REV]: the size of the public API, per public package and in all: exported
# declarations (funcs, methods, types, consts, vars and interface methods; struct fields and
# embedded interfaces not counted) and the lines of `go doc -short`.
#
# Without REV it measures the working tree from docs/api.txt (TestAPIFile holds that file to the
# code). With REV (a commit) it checks REV out in a temporary worktree, writes its api.txt with
# this tree's api_test.go (-update), and measures that.
#
#   scripts/api-surface.sh            # this tree
#   scripts/api-surface.sh 612a58d    # the baseline
set -eu
root=$(git rev-parse --show-toplevel)
dir=$root
if [ $# -gt 0 ]; then
	dir=$(mktemp -d)
	trap 'git -C "$root" worktree remove --force "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
	git -C "$root" worktree add --detach "$dir" "$1" >/dev/null 2>&1
	cp "$root/api_test.go" "$dir/api_test.go"
	(cd "$dir" && go test -count=1 -run '^TestAPIFile$' . -update >/dev/null)
fi
cd "$dir"
module=github.com/inferbench/inferbench
printf '%-16s %6s %8s\n' package decls godoc
awk -F', ' '{print $1}' docs/api.txt | sed "s|^pkg $module||; s|^/||" | sort -u | while read -r p; do
	decls=$(grep -E "^pkg $module${p:+/$p}, " docs/api.txt | grep -vcE ' struct, | interface, embedded ' || true)
	doc=$(go doc -short "./$p" | wc -l)
	printf '%-16s %6d %8d\n' "${p:-inferbench}" "$decls" "$doc"
done | sort | awk '{print; d+=$2; g+=$3} END {printf "%-16s %6d %8d\n", "total", d, g}'
