#!/usr/bin/env bash
# `make gpu-check LOG_DIR=dir` on a GPU machine: build everything, run every chapter's tests, run the GPU tests
# again at small sizes under compute-sanitizer (memcheck, racecheck), run every benchmark. Logs, CSVs and plots go
# into LOG_DIR/<chapter>/; a summary at the end. Exit status 0 only if every step passed.
#
# To fit in a few minutes, four lanes run side by side: the chapters' tests (one chapter at a time: the largest need
# tens of GB of GPU memory), the course-wide tests (notebooks included), and two lanes of sanitizer runs (small
# sizes). The benchmarks then run alone, one at a time, so that nothing else shares the GPU while they measure.
set -u
log=$1
shift
chapters=("$@")
python=${PYTHON:-python3}
step_timeout=${GPU_CHECK_STEP_TIMEOUT:-300}
steps=" ${STEPS:-test sanitize bench} "  # any of: test sanitize bench (the build always runs)
# Each step is a make or pytest of its own: none should inherit the calling make's variables and jobserver (make
# also exports its command-line variables, LOG_DIR among them, to the environment).
unset MAKEFLAGS MFLAGS MAKELEVEL LOG_DIR
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

tests_lane() {
    for c in "${chapters[@]}"; do
        step "$c/test" make --no-print-directory -C "chapters/$c" test JUNIT_XML="$log/$c.xml" LOG_DIR="$log/$c"
    done
}

course_tests() {
    # The exercise-stub check rebuilds every chapter's exercise variant; CI runs it on every change, so it is left
    # out here to keep the GPU run short.
    local only="not test_exercise_stubs_fail${CHAPTER:+ and $CHAPTER}"
    # faulthandler_timeout: a test that stalls prints every thread's stack into the log; --durations names the slow.
    step course/tests "$python" -m pytest tests -q -k "$only" -o faulthandler_timeout=120 --durations=10 \
        --junitxml="$log/course.xml"
}

sanitize_lane() {  # sanitize_lane FIRST: every second chapter from FIRST on, so two lanes share the work
    local i
    for ((i = $1; i < ${#chapters[@]}; i += 2)); do
        step "${chapters[i]}/sanitize" make --no-print-directory -C "chapters/${chapters[i]}" sanitize LOG_DIR="$log/${chapters[i]}"
    done
}

nvidia-smi -L || echo "warning: nvidia-smi found no GPU"
step all/build make --no-print-directory -j8 build
if [[ $steps == *" test "* ]]; then
    tests_lane &
    course_tests &
fi
if [[ $steps == *" sanitize "* ]]; then
    sanitize_lane 0 &
    sanitize_lane 1 &
fi
wait
if [[ $steps == *" bench "* ]]; then
    for c in "${chapters[@]}"; do
        step "$c/bench" make --no-print-directory -C "chapters/$c" bench LOG_DIR="$log/$c"
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
