#!/usr/bin/env bash
# Runs every test of the workspace. README's second command; .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --workspace "$@"
