#!/usr/bin/env bash
# research/ensemble/README.md: the screen (seed 4421, 2,500 walls) and the confirmation of the
# screen's pick (seed 4423, 10,000 walls; no screen used either seed). One seat against three
# heuristics, advantage sum; every candidate paired wall by wall with strongest-net on the same
# walls. The tag strongest-net is exit-valueleaf-guard, the alias's target when this ran (the
# alias now names ens6-guard, registered as ensemble6-guard). The matches' JSON (per-wall
# samples, megabytes) stay in runs/ensemble; the paired figures go to research/ensemble/results.
# Existing outputs are kept: rerunning resumes.
# Usage: bash research/ensemble/run.sh screen
#        bash research/ensemble/run.sh confirm AGENT_TAG   (one of the screen's tags)
#        bash research/ensemble/run.sh hybrid-screen        (strongest's search on the ensemble)
#        bash research/ensemble/run.sh hybrid-confirm
#        bash research/ensemble/run.sh hybrid-confirm2       (8,000 fresh walls, seed 4429)
#        bash research/ensemble/run.sh guard-screen          (the guard re-tuned for ens6)
#        bash research/ensemble/run.sh guard-confirm g-SETTING
#        bash research/ensemble/run.sh s128-screen           (strongest with 128 rollouts)
#        bash research/ensemble/run.sh student-screen       (after python -m research.ensemble.distill)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=runs/ensemble
R=research/ensemble/results
A=research.ensemble.agents
mkdir -p "$RUN" "$R"
declare -A SPEC=(
    [strongest-net]=exit-valueleaf-guard [na-r3]=agents/checkpoints/oracle_r3.pt
    [ens3]=$A:ens3 [ens3-guard]=$A:ens3_guard [ens6]=$A:ens6 [ens6-guard]=$A:ens6_guard
    [strongest]=distill-search64-after-win [ens6-guard-s64]=$A:ens6guard_search64_after_win
    [student-guard]=$A:student_guard [strongest-now]=strongest
    [ens6-guard-s128]=$A:ens6guard_search128_after_win
)
GRID="t05_k9 t15_k9 t20_k9 t10_k8 t15_k8 t20_k8 t10_k10 t10_k9_s1"  # agents.GUARD_GRID
for g in $GRID; do SPEC[g-$g]=$A:ens6_guard_$g; done
m() {  # tag walls seed
    local out="$RUN/$1-$2-s$3.json"
    [ -e "$out" ] && return
    rm -f "$out.tmp"
    /usr/bin/time -f "$1 $2 walls seed $3: %e s" sichuan-eval --lineup "${SPEC[$1]}" heuristic \
        heuristic heuristic --walls "$2" --seed "$3" --estimator advantage --json "$out.tmp" --quiet
    mv "$out.tmp" "$out"
}
p() {  # tag walls seed [base]: tag - base (strongest-net), paired
    local base=${4:-strongest-net}
    python -m research.exit.paired "$RUN/$1-$2-s$3.json" "$RUN/$base-$2-s$3.json" \
        --out "$R/$1-minus-$base-$2-s$3.json" --overwrite
    python - "$RUN" "$R" "$1-$2-s$3" "$base-$2-s$3" <<'PY'
import json, os, sys
for name in sys.argv[3:]:  # each match's figures without its per-wall samples
    d = json.load(open(f"{sys.argv[1]}/{name}.json"))
    d.pop("per_wall", None)
    out = f"{sys.argv[2]}/{name}-summary.json"
    json.dump(d, open(out + ".tmp", "w"), indent=1)
    os.replace(out + ".tmp", out)
PY
}
case "${1:-}" in
screen)
    m strongest-net 2500 4421
    for t in na-r3 ens3 ens3-guard ens6 ens6-guard; do m "$t" 2500 4421; p "$t" 2500 4421; done ;;
confirm)
    t=${2:?which tag}
    m strongest-net 10000 4423
    m "$t" 10000 4423
    p "$t" 10000 4423 ;;
hybrid-screen)  # strongest's search on ensemble6-guard instead of distill: seed 4425
    m strongest 2000 4425
    m ens6-guard-s64 2000 4425
    p ens6-guard-s64 2000 4425 strongest ;;
hybrid-confirm)
    m strongest 4000 4427
    m ens6-guard-s64 4000 4427
    p ens6-guard-s64 4000 4427 strongest ;;
hybrid-confirm2)  # a second, larger confirmation on fresh walls (seed 4429), fixed before it ran
    m strongest 8000 4429
    m ens6-guard-s64 8000 4429
    p ens6-guard-s64 8000 4429 strongest ;;
guard-screen)  # ens6 under other guard settings, each - ens6-guard: seed 4431, 5,000 walls
    m ens6-guard 5000 4431
    for g in $GRID; do m "g-$g" 5000 4431; p "g-$g" 5000 4431 ens6-guard; done ;;
guard-confirm)  # the screen's best (largest paired mean) against ens6-guard: seed 4433, 20,000 walls
    t=${2:?which tag, g-SETTING}
    m ens6-guard 20000 4433
    m "$t" 20000 4433
    p "$t" 20000 4433 ens6-guard ;;
s128-screen)  # strongest (now the search on the ensemble) with 128 rollouts: seed 4435, 3,000 walls
    m strongest-now 3000 4435
    m ens6-guard-s128 3000 4435
    p ens6-guard-s128 3000 4435 strongest-now ;;
student-screen)  # the student of distill.py against the ensemble it learnt, screen walls
    m student-guard 2500 4421
    p student-guard 2500 4421 ens6-guard
    p student-guard 2500 4421 ;;
*) echo "usage: run.sh screen | confirm TAG | hybrid-screen | hybrid-confirm | hybrid-confirm2 | guard-screen | guard-confirm TAG | s128-screen | student-screen" >&2; exit 2 ;;
esac
