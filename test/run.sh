#!/usr/bin/env bash
# Runs the tests with node:test through tsx. `run.sh` runs all of them; `run.sh unit`
# or `run.sh integration` one kind; `run.sh <file>... [--test-name-pattern=...]` the
# files given. Integration and end-to-end tests start real servers, so files run
# one at a time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

unit=$(find shared/src services/*/src packages/*/src bench -name '*.test.ts' 2>/dev/null | sort)
integration=$(find test examples -path test/bed -prune -o -name '*.test.ts' -print | sort)

files=()
options=()
for arg in "$@"; do
  case "$arg" in
    --*) options+=("$arg") ;;
    unit) files+=($unit) ;;
    integration) files+=($integration) ;;
    *) files+=("$arg") ;;
  esac
done
[ ${#files[@]} -gt 0 ] || files=($unit $integration)

# A run must end: a file whose tests are done exits even if a handle leaked (its
# servers die with it, see test/bed/process.ts), and no test waits past 10 minutes.
exec node --conditions=source --import tsx --test --test-concurrency=1 \
  --test-force-exit --test-timeout=600000 \
  --test-reporter=spec "${options[@]}" "${files[@]}"
