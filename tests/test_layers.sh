#!/usr/bin/env bash
# Fails when a lower layer includes an upper one (shared/DESIGN.md).
cd "$(dirname "$0")/.." && bash scripts/check-layers.sh
