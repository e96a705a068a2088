#!/usr/bin/env bash
# validate.sh — check deploy/k8s/*.yaml against the Kubernetes API schemas and against each other (opt-in).
# Needs node (20+) and npm; installs kubernetes-models (the API's JSON schemas as validating models) and
# js-yaml from the npm registry into a temporary directory, runs validate.mjs, and removes the directory.
# This checks shapes and the names that must agree; only a real cluster (kubectl apply --dry-run=server,
# then a rollout) checks scheduling, DNS and the members' election.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
command -v npm >/dev/null || { echo "validate.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
WORK="$(mktemp -d /tmp/rota-k8s-validate.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cp "$HERE/validate.mjs" "$WORK/"
(cd "$WORK" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund --engine-strict=false \
  kubernetes-models@5.1.0 js-yaml@4.1.0 >/dev/null 2>&1) \
  || { echo "validate.sh: npm install of kubernetes-models and js-yaml failed (no registry access?)" >&2; exit 1; }
ROTA_K8S_DIR="$HERE" node "$WORK/validate.mjs"
