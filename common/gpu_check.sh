#!/usr/bin/env bash
# `make gpu-check LOG_DIR=dir` on a GPU machine: build everything, run every chapter's tests, run the GPU tests
# again at small sizes under compute-sanitizer (memcheck, racecheck), run every benchmark. Logs, CSVs and plots go
# into LOG_DIR/<chapter>/; a summary at the end. Exit status 0 only if every step passed.
#
# To fit in a few minutes, the tests and the sanitizers share the machine: two workers take chapters' tests from a
# queue, two more take chapters' sanitizer runs, and the course-wide tests (notebooks included) run beside them.
# Tests marked big_memory (tens of GB of GPU memory) take turns across all of them (see course/pytest_plugin.py).
# The queues start with the later chapters, which take longest, so the workers finish close together. The
# benchmarks then run alone, one at a time, so that nothing else shares the GPU while they measure.
set -u
log=$1
shift
chapters=("$@")
python=${PYTHON:-python3}
# A step (one chapter's tests, say) that runs past this is stopped and marked FAILED, so that a stalled test cannot
# take the whole call. Chapter 09's tests took 320 s beside its sanitizer runs on the H200 (2026-12-01): 480 s
# leaves room and still ends a call of build + tests well inside a device command's 10 minutes.
step_timeout=${GPU_CHECK_STEP_TIMEOUT:-480}
steps=" ${STEPS:-test sanitize bench} "  # any of: test sanitize bench (the build always runs)
# Each step is a make or pytest of its own: none should inherit the calling make's variables and jobserver (make
# also exports its command-line variables, LOG_DIR among them, to the environment).
unset MAKEFLAGS MFLAGS MAKELEVEL LOG_DIR
# A chapter whose build is missing fails its benchmark instead of leaving rows out (course/build.py).
export COURSE_REQUIRE_BUILDS=1
# CHAPTER="03 05" (a list) limits the course tests and notebooks to those chapters too.
read -r -a only_chapters <<<"${CHAPTER:-}"

mkdir -p "$log"
summary="$log/summary.txt"
: >"$summary"

step() {  # step NAME COMMAND...: run, log to $log/NAME.log, add a line to the summary
    local name=$1 start=$SECONDS result=ok
    shift
    mkdir -p "$(dirname "$log/$name.log")"
    timeout "$step_timeout" "$@" >"$log/$name.log" 2>&1 || result=FAILED
    printf '%-34s %-6s %4ss  %s\n' "$name" "$result" $((SECONDS - start)) "$log/$name.log" | tee -a "$summary"
}

chapter_step() {  # chapter_step STEP CHAPTER: make STEP in the chapter, logged under $log/CHAPTER/
    local extra=()
    [ "$1" = test ] && extra=(JUNIT_XML="$log/$2.xml")
    step "$2/$1" make --no-print-directory -C "chapters/$2" "$1" "${extra[@]}" LOG_DIR="$log/$2"
}

queue() {  # queue STEP WORKERS: run STEP for every chapter, WORKERS at a time, later chapters first
    export -f step chapter_step
    export log step_timeout summary
    printf '%s\n' "${chapters[@]}" | sort -r | xargs -P "$2" -I{} bash -c 'chapter_step "$0" "$1"' "$1" {}
}

course_tests() {
    # The exercise-stub check rebuilds every chapter's exercise variant; CI runs it on every change, so it is left
    # out here to keep the GPU run short.
    local only="not test_exercise_stubs_fail"
    if [ ${#only_chapters[@]} -gt 0 ]; then
        local any
        any=$(printf ' or %s' "${only_chapters[@]}")
        only="$only and (${any# or })"
    fi
    # faulthandler_timeout: a test that stalls prints every thread's stack into the log; --durations names the slow.
    step course/tests "$python" -m pytest tests -q -k "$only" -o faulthandler_timeout=120 --durations=10 \
        --junitxml="$log/course.xml"
}

notebooks() {
    # Every notebook in a real Jupyter kernel, beside the tests; the executed copies go to $log/notebooks/, and
    # `make notebooks-from-gpu LOG_DIR=$log` puts their GPU cells' outputs into notebooks/. The GPU machine has no
    # Jupyter of its own: bring the wheels (common/jupyter_wheels.sh) and put them on PYTHONPATH first.
    local only=(notebooks/*.ipynb) c
    if [ ${#only_chapters[@]} -gt 0 ]; then
        only=()
        for c in "${only_chapters[@]}"; do only+=(notebooks/"$c"*.ipynb); done
    fi
    step notebooks/execute "$python" -m course.notebooks execute "${only[@]}" --out "$log/notebooks"
}

nvidia-smi -L || echo "warning: nvidia-smi found no GPU"
step all/build make --no-print-directory -j8 build
if [[ $steps == *" test "* ]]; then
    queue test 2 &
    course_tests &
    notebooks &
fi
if [[ $steps == *" sanitize "* ]]; then
    queue sanitize 2 &
fi
wait
if [[ $steps == *" bench "* ]]; then
    for c in "${chapters[@]}"; do
        chapter_step bench "$c"
    done
fi

echo
echo "==================== gpu-check summary ($SECONDS s) ===================="
sort -s -k1,1 "$summary"
score=0
if [[ $steps == *" test "* ]]; then
    "$python" -m course.score "$log" "${chapters[@]}" course
    score=$?
fi
! grep -q FAILED "$summary" && [ "$score" -eq 0 ]
