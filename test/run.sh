#!/usr/bin/env bash
# Runs the tests with node:test through tsx. `run.sh` runs all of them; `run.sh unit`
# only the unit tests beside the code; `run.sh <file>...` the files given.
# Integration and end-to-end tests start real servers, so files run one at a time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

unit=$(find shared/src services/*/src -name '*.test.ts' 2>/dev/null | sort)
integration=$(find test -path test/bed -prune -o -name '*.test.ts' -print | sort)

case "${1:-all}" in
  unit) files=$unit ;;
  integration) files=$integration ;;
  all) files="$unit $integration" ;;
  *) files="$*" ;;
esac

# shellcheck disable=SC2086
exec node --conditions=source --import tsx --test --test-concurrency=1 \
  --test-reporter=spec $files
