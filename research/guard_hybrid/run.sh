#!/usr/bin/env bash
# The screen of research/guard_hybrid/README.md (2-core machine; no candidate was separated,
# so no confirmation was run).
# Existing outputs are kept: rerunning resumes.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=research/guard_hybrid/results
A=research.guard_hybrid.agents
m() {  # tag agent walls seed
    local out="$R/$1-$3-s$4.json"
    [ -e "$out" ] || python -m research.advantage_sum.measure --agent "$2" --walls "$3" --seed "$4" --out "$out"
}
p() {  # first second walls seed
    local out="$R/paired-$1-minus-$2-s$4.json"
    [ -e "$out" ] || python -m research.advantage_sum.paired "$R/$1-$3-s$4.json" "$R/$2-$3-s$4.json" --out "$out"
}
# the screen: seed 921, 1,000 walls
m strongest strongest 1000 921
m guard-s64 "$A:guard_search64_after_win" 1000 921
m valueleaf-s64 "$A:valueleaf_search64_after_win" 1000 921
p guard-s64 strongest 1000 921
p valueleaf-s64 strongest 1000 921
