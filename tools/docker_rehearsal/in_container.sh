#!/bin/sh
# Inside the rehearsal container (tools/docker_rehearsal/rehearse.sh mounts everything read-only
# but ~/output), as the contest runs a submission, under the image's user `jovyan`:
#
#     in_container.sh organizers|replica
#
# organizers: their src/ (mounted at /harness/src, unchanged) copied to ~/src, its baseline
#   submit/ replaced by the zip unpacked there; `cd ~/src && python run.py`, whose own paths read
#   ../data/leaderboard_data.jsonl (the sample, mounted there) and write ../output.
# replica: our harness replica (tools/rehearse.py, mounted at /repo) over the zip in ~/app/submit.
# REHEARSAL_NO_WHEELS=1 removes the zip's wheels after unpacking: that run must fail.
# The observer (observer/sitecustomize.py) rides on PYTHONPATH and writes $REHEARSAL_REPORT.
set -eu
mode="$1"
zip=/dist/submission.zip
export PYTHONPATH=/rehearsal/observer REHEARSAL_REPORT="$HOME/output/observed.json"

unpack() {  # the zip's root is the submission package (docs/submitting.md)
    python -m zipfile -e "$zip" "$1"
    if [ -n "${REHEARSAL_NO_WHEELS:-}" ]; then
        rm -f "$1"/wheels/*.whl
        echo "rehearsal: the zip's wheels removed: $(ls "$1/wheels")"
    fi
}

case "$mode" in
    organizers)
        cp -r /harness/src "$HOME/src"
        rm -rf "$HOME/src/submit"
        unpack "$HOME/src/submit"
        cd "$HOME/src"
        exec python run.py ;;
    replica)
        unpack "$HOME/app/submit"
        exec python /repo/tools/rehearse.py --unpacked "$HOME/app" --no-demo \
            --data "$HOME/data/leaderboard_data.jsonl" --out "$HOME/output" ;;
    *)
        echo "in_container.sh: organizers or replica, not '$mode'" >&2; exit 2 ;;
esac
