#!/usr/bin/env bash
# Regenerate docs/screenshots/*.png from a fresh copy of the demo wiki (`make screenshots`).
# Uses throwaway settings and data folders, so your own recent wikis and demo copy stay untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
curator=.venv/bin/curator
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
export XDG_DATA_HOME="$state/data" XDG_CONFIG_HOME="$state/config" QT_QPA_PLATFORM=offscreen
demo=$(.venv/bin/python -c 'from curator.views.shell.app import demo_wiki; print(demo_wiki())')
# A little history, as an operator's first session would leave it.
"$curator" --wiki "$demo" set kestrel-payouts trust 0.92 >/dev/null
"$curator" --wiki "$demo" --as agent:dudu append kestrel-payouts \
  "Payout files for Cathay United Bank now go out at 16:30 instead of 15:00" --link settlement >/dev/null
"$curator" --wiki "$demo" set project-lantern-notes tags "lantern, research" >/dev/null
# Two links written by a shortened name: the Links view suggests the page they mean.
"$curator" --wiki "$demo" append kestrel-payouts \
  "Payout files are matched against the bank statement every morning" --link "Daily Bank Reconciliation" >/dev/null
"$curator" --wiki "$demo" append settlement \
  "Unmatched settlement lines are escalated after two business days" --link "Daily Bank Reconciliation" >/dev/null
# A fact that disagrees with the retention rules (35 days): the Facts view's Conflicts tab lists it.
"$curator" --wiki "$demo" append kestrel-payouts "Backups of payout files expire after 90 days." >/dev/null
mkdir -p docs/screenshots
for view in page page:付款流程 health graph links inbox auto history policy facts:similar facts:conflicts facts:stale; do
  name=${view%%:*}
  [ "$name" = facts ] && name="facts-${view#facts:}"
  [ "$view" = page ] && name=main  # main.png: the browser, a page and its properties
  "$curator" gui "$demo" --screenshot "docs/screenshots/$name.png" --view "$view" >/dev/null 2>&1
  echo "docs/screenshots/$name.png"
done
# The Duplicates view on the demo's family of three copies (data retention).
"$curator" gui "$demo" --screenshot docs/screenshots/duplicates-family.png --view dedup >/dev/null 2>&1
echo docs/screenshots/duplicates-family.png
# The dark theme (View > Theme > Dark), on the demo's Kestrel Payouts (an embed, a table).
"$curator" gui "$demo" --theme dark --screenshot docs/screenshots/dark.png --view page:kestrel-payouts >/dev/null 2>&1
echo docs/screenshots/dark.png
# Embeds (an inline image, a transcluded section) on the synthetic Obsidian vault the tests use.
vault="$state/vault"
.venv/bin/python -m tests.obsidian_vault --write "$vault" >/dev/null
git -C "$vault" init -q && git -C "$vault" add -A && \
  git -C "$vault" -c user.name=demo -c user.email=demo@curator.invalid commit -qm vault
"$curator" gui "$vault" --screenshot docs/screenshots/embeds.png --view "page:Transclusion demo" >/dev/null 2>&1
echo docs/screenshots/embeds.png
"$curator" gui "$vault" --screenshot docs/screenshots/callouts.png --view "page:Callouts" >/dev/null 2>&1
echo docs/screenshots/callouts.png
# The merge preview of the demo's project-lantern pair, as the duplicate queue opens it.
CURATOR_SCREENSHOT_DIR=docs/screenshots .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/views/page/test_gui_curation.py -k demo_lantern >/dev/null
echo "docs/screenshots/merge-dialog.png"
# Find in page (Ctrl+F) and the outline of headings, on the demo's Kestrel Payouts.
CURATOR_SCREENSHOT_DIR=docs/screenshots .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/views/shell/test_gui_comfort.py -k demo_find >/dev/null
echo "docs/screenshots/find-outline.png"
# The editor with [[ completion open, the three-way view of a save after an agent's append, and
# ranked search results: grabbed by the station tests that exercise them.
CURATOR_SCREENSHOT_DIR=docs/screenshots .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/views/page/test_gui_editing.py tests/views/browser/test_gui_search_results.py -k "completion or three_versions or snippets" >/dev/null
echo "docs/screenshots/editor.png docs/screenshots/edit-conflict.png docs/screenshots/search-results.png"
