#!/bin/sh
# Draw the plots of the reports committed under docs/results (or the
# folders given) from the results documents beside them. The clone keeps
# only the plots a hand-written page names (issue 41: 168 PNGs, 18 MB, were
# each a rendering of a document already committed); every report.md and
# report.html links its plots, and this puts them back, byte for byte what
# was there (the renderer is deterministic: TestCommittedPlotsRedraw).
# A plot a new page names is committed with git add -f (.gitignore leaves
# docs/results' PNGs out).
set -eu
BIN=${BIN:-bin/provebench}
[ "$#" -gt 0 ] || set -- docs/results
find "$@" -name results.json.gz | sort | while read -r doc; do
	dir=$(dirname "$doc")
	[ -e "$dir/report.md" ] || [ -e "$dir/report.html" ] || continue
	"$BIN" report "$doc" -o "$dir" --format png >/dev/null
	echo "$dir: plots drawn"
done
