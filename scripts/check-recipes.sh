#!/usr/bin/env bash
# Follows docs/architecture.md's recipes for a new kv engine, a new workload, a step figure and a new
# family (with an engine of it and a workload on it), step by step as
# the doc writes them, in a copy of the tree (the templates are scripts/recipes/), checks the
# copy with its tests, and runs the new engine's conformance test and the new workload's test:
# a recipe whose file, line or registry moved fails here, so the doc cannot drift from the
# code. scripts/test.sh runs it; it takes a few minutes (the copy shares the Cargo target
# directory, so nothing outside the workspace is compiled again).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
# The working tree's files, tracked or new (a file deleted but not yet staged is left out).
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
  xargs -0 cp --parents -t "$copy"
python3 - "$copy" <<'PY'
import pathlib, re, shutil, sys
root = pathlib.Path(sys.argv[1])
doc = (root / "docs/architecture.md").read_text()
steps = 0
# "Copy `FROM` to `TO`": a template into the tree.
for src, dst in re.findall(r"Copy `(scripts/recipes/[^`]+)` to `([^`]+)`", doc):
    shutil.copy(root / src, root / dst)
    steps += 1
# "In `FILE`, after the line `ANCHOR`:" then a fenced block: the block's lines go after it.
for path, anchor, block in re.findall(
        r"In `([^`]+)`, after the line `([^`]+)`:\s*```[a-z]*\n(.*?)```", doc, re.S):
    f = root / path
    lines = f.read_text().split("\n")
    at = [i for i, l in enumerate(lines) if l.strip() == anchor.strip()]
    if not at:
        sys.exit(f"check-recipes: docs/architecture.md says to add lines after `{anchor}` in {path}, which has no such line")
    lines[at[0] + 1:at[0] + 1] = block.rstrip("\n").split("\n")
    f.write_text("\n".join(lines))
    steps += 1
# "At the end of `FILE`:" then a fenced block: the block goes at the file's end.
for path, block in re.findall(r"At the end of `([^`]+)`:\s*```[a-z]*\n(.*?)```", doc, re.S):
    f = root / path
    f.write_text(f.read_text().rstrip("\n") + "\n\n" + block.rstrip() + "\n")
    steps += 1
if steps < 28:
    sys.exit(f"check-recipes: docs/architecture.md's recipes have {steps} steps the script can follow; expected the kv engine's, the workload's, the step figure's and the family's (28)")
print(f"check-recipes: followed {steps} steps of docs/architecture.md")
PY
(cd "$copy" && cargo check --release --workspace --all-targets --quiet)
# Each filter must find its one test: a filter that found none would pass without running it.
passes_one() {
  local out
  out=$(cd "$copy" && cargo test --release "$@" 2>&1) || { echo "$out" >&2; exit 1; }
  grep -q "test result: ok. 1 passed" <<<"$out" || {
    echo "$out" >&2
    echo "check-recipes: \`cargo test $*\` did not run the recipe's one test" >&2
    exit 1
  }
}
passes_one -p fathom-engines --test conformance -- --exact myengine
passes_one -p fathom-workloads --lib -- myworkload::
passes_one -p fathom-workloads --lib -- myappends::
# The step figure's second step: the docs' table written, then checked as CI checks it.
(cd "$copy" && UPDATE_DOCS=1 cargo test --release --quiet -p fathom-schema --lib figures:: >/dev/null)
grep -q '^| hw/o | waits |' "$copy/docs/results.md" || { echo "check-recipes: docs/results.md's figure table lacks the recipe's figure" >&2; exit 1; }
passes_one -p fathom-schema --lib -- figures::tests::the_docs_hold_this_table
passes_one -p fathom-report --lib -- every_figure_is_a_column
echo "check-recipes: a kv engine, a workload, a step figure and a family added as the doc says build and pass their tests"
