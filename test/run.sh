#!/usr/bin/env bash
# `npm test` (= .ci/run): type check, lint, then the two vitest projects of
# vitest.config.ts — the in-memory files sharing one module graph per worker,
# then the files that start servers, each isolated. Both run even if the
# first fails, so one CI run shows every failure.
set -uo pipefail
cd "$(dirname "$0")/.."
npx tsc -p . --noEmit || exit 1
npm run lint || exit 1
npx vitest run --project in-memory --no-isolate
memory=$?
npx vitest run --project servers
servers=$?
exit $((memory || servers))
