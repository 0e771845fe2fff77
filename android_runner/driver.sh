#!/system/bin/sh
# edgefarm's on-phone driver. POSIX sh as Android has it: mksh as /system/bin/sh and toybox
# applets (the device lab runs exactly those). No `timeout`, no awk, no GNU options, and
# arithmetic kept small (mksh integers are 32-bit signed).
#
#   sh driver.sh native   JOB_DIR RUNNER LIB_DIR   native runner, ONE model load per run
#   sh driver.sh serve    JOB_DIR RUNNER LIB_DIR   native runner for `edgefarm serve`: requests come one by
#                                                  one as JOB_DIR/requests/*.job until JOB_DIR/requests/stop
#   sh driver.sh upstream JOB_DIR BINARY LIB_DIR   litert_lm_advanced_main once per sample
#   sh driver.sh hook     SAMPLE_DIR before|after  settle + cooldown gates, battery/thermal snapshot
#   sh driver.sh stop     JOB_DIR                  stop this job's driver and runner, for certain
#
# The host renders everything as files, so no prompt, id or dataset text is ever on a command line;
# paths are positional arguments, never pasted into a command string.
# Both: JOB_DIR/settings, the run's settings (android_runner/settings.py: "EFSETTINGS 1", then key=value
#           lines): the native runner reads it itself (--settings), the hook its cooldown gate, and
#           upstream's flags are made from it here.
# native:   JOB_DIR/job.conv (the conversations); the runner appends JOB_DIR/results.jsonl; the driver
#           restarts it after a crash, recording the sample in flight (JOB_DIR/inflight) as crash/oom.
# upstream: JOB_DIR/index.tsv (n<TAB>multi), and per sample samples/N/{prompt.txt|turns.txt,flags}
#           (flags: the sample's own, one per line); writes samples/N/{stdout,stderr,trace.tsv,...}
#           and appends `N<TAB>rc<TAB>wall_ms` to JOB_DIR/done.tsv.
# Both write JOB_DIR/driver.pid ("driver_pid worker_pid") and print EDGEFARM lines on stdout.

MODE=$1
TAB=$(printf '\t')
INTERVAL=${EDGEFARM_TRACE_INTERVAL:-0.1}
POWER_DIR=/sys/class/power_supply/battery
TIMEOUT_RC=124

fatal() {
  echo "EDGEFARM FATAL $*" >&2
  exit "${FATAL_RC:-2}"
}

# Centiseconds since the driver started: differences only, so 32-bit arithmetic never overflows
# (milliseconds since boot would after 24.8 days of uptime).
read -r UP0 _ < /proc/uptime
UP0_S=${UP0%.*}
now_cs() {
  read -r up _ < /proc/uptime
  s=${up%.*}
  c=${up#*.}
  c=${c#0}
  echo $(( (s - UP0_S) * 100 + ${c:-0} ))
}

# True when pid $1 is alive and its command line mentions $2 (pids get reused).
is_ours() {
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null && grep -q "$2" "/proc/$1/cmdline" 2>/dev/null
}

# Kill pid $1 (if it is still $2) and wait until it is gone: SIGKILL cannot be ignored or
# swallowed by a wrapper, so no earlier worker survives a resume.
kill_for_certain() {
  is_ours "$1" "$2" || return 0
  kill -9 "$1" 2>/dev/null
  i=0
  while [ -d "/proc/$1" ] && [ "$i" -lt 100 ]; do
    sleep 0.05
    i=$((i + 1))
  done
}

# Stop the driver and the worker recorded in JOB/driver.pid (not ourselves).
stop_job() {
  LOCK="$1/driver.pid"
  [ -f "$LOCK" ] || return 0
  read -r old_driver old_worker _ < "$LOCK"
  [ "$old_driver" = "$$" ] && return 0
  stopped=
  if is_ours "$old_driver" driver.sh; then
    kill_for_certain "$old_driver" driver.sh  # first: a live driver would start a new worker
    stopped=1
  fi
  if is_ours "$old_worker" "${2:-.}"; then
    kill_for_certain "$old_worker" "${2:-.}"
    stopped=1
  fi
  [ -n "$stopped" ] && echo "EDGEFARM NOTE stopped an earlier driver (pid $old_driver) and its runner (pid $old_worker) of this job"
  return 0
}

# Battery temperature in tenths of a degree C (`dumpsys battery`: "  temperature: 312"); empty if unknown.
battery_tenths() {
  dumpsys battery 2>/dev/null | while IFS=: read -r key val; do
    case "$key" in
      *temperature)
        v=$(echo $val)
        case "$v" in ''|*[!0-9-]*) ;; *) echo "$v"; break ;; esac ;;
    esac
  done
}

# digits VALUE: true when VALUE is a whole number written in digits (checked before any arithmetic:
# mksh evaluates names inside $((...)), so nothing else read from a file may reach it).
digits() {
  case "$1" in ''|*[!0-9]*) return 1 ;; esac
  [ "${#1}" -le 9 ]
}

# read_settings FILE: the run's settings (android_runner/settings.py) into SET_<key>, for the keys the
# driver uses; each value as written (no word splitting, no eval). False when FILE is not a settings file.
read_settings() {
  [ -f "$1" ] || return 1
  first=1
  while IFS= read -r line || [ -n "$line" ]; do
    if [ -n "$first" ]; then
      [ "$line" = "EFSETTINGS 1" ] || return 1
      first=
      continue
    fi
    v=${line#*=}
    case "$line" in
      model=*) SET_model=$v ;;
      cache_dir=*) SET_cache_dir=$v ;;
      backend=*) SET_backend=$v ;;
      vision_backend=*) SET_vision_backend=$v ;;
      audio_backend=*) SET_audio_backend=$v ;;
      threads=*) SET_threads=$v ;;
      max_num_tokens=*) SET_max_num_tokens=$v ;;
      sample_timeout_ms=*) SET_sample_timeout_ms=$v ;;
      cooldown_mc=*) SET_cooldown_mc=$v ;;
      cooldown_max_ms=*) SET_cooldown_max_ms=$v ;;
      settle_mc=*) SET_settle_mc=$v ;;
      settle_window_ms=*) SET_settle_window_ms=$v ;;
      settle_max_ms=*) SET_settle_max_ms=$v ;;
    esac
  done < "$1"
  [ -z "$first" ]
}

# milli DECIMAL: "36.75" -> 36750 (milli-degrees); false for anything else (a missing sensor's -99.9 too)
milli() {
  case "$1" in ''|.*|*[!0-9.]*|*.*.*) return 1 ;; esac
  i=${1%%.*}
  f=
  case "$1" in *.*) f=${1#*.} ;; esac
  f="${f}000"
  f=${f%"${f#???}"}
  while [ "${#i}" -gt 1 ] && [ "${i#0}" != "$i" ]; do i=${i#0}; done
  while [ "${#f}" -gt 1 ] && [ "${f#0}" != "$f" ]; do f=${f#0}; done
  [ "${#i}" -le 3 ] && digits "$i" && digits "$f" || return 1
  echo $((i * 1000 + f))
}

# settle_sensors: "NAME MILLI_C" per temperature sensor the phone shows without root: the battery
# (dumpsys battery) and the live HAL sensors of type CPU (0), skin (3) and SoC (13) in dumpsys
# thermalservice (virtual ones only for skin, as orchestrator/telemetry/android.py reads them).
settle_sensors() {
  t=$(battery_tenths)
  [ -n "$t" ] && echo "battery $((t * 100))"
  dumpsys thermalservice 2>/dev/null | {
    live=
    while IFS= read -r line; do
      case "$line" in
        *"Current temperatures from HAL:"*) live=1; continue ;;
        *"Temperature{"*) [ -n "$live" ] || continue ;;
        *) live=; continue ;;
      esac
      ty=${line#*mType=}; ty=${ty%%,*}
      case "$ty" in 0|3|13) ;; *) continue ;; esac
      nm=${line#*mName=}; nm=${nm%%[,\}]*}
      case "$nm" in ''|*[!A-Za-z0-9_.-]*) continue ;; esac
      case "$nm" in [Vv][Ii][Rr][Tt][Uu][Aa][Ll]-*) [ "$ty" = 3 ] || continue ;; esac
      v=${line#*mValue=}; v=${v%%,*}
      mc=$(milli "$v") || continue
      echo "$nm $mc"
    done
  }
}

# settle_span LOG FROM: the largest change (max - min, milli-degrees) of any one sensor over the log's
# readings taken at or after FROM (centiseconds); the log's lines are "CS NAME MILLI_C", ours.
settle_span() {
  names=
  while read -r cs nm mc; do
    [ "$cs" -ge "$2" ] || continue
    case " $names " in *" $nm "*) ;; *) names="$names $nm" ;; esac
  done < "$1"
  worst=0
  for nm in $names; do
    lo=; hi=
    while read -r cs n mc; do
      [ "$n" = "$nm" ] && [ "$cs" -ge "$2" ] || continue
      if [ -z "$lo" ] || [ "$mc" -lt "$lo" ]; then lo=$mc; fi
      if [ -z "$hi" ] || [ "$mc" -gt "$hi" ]; then hi=$mc; fi
    done < "$1"
    [ $((hi - lo)) -gt "$worst" ] && worst=$((hi - lo))
  done
  echo "$worst"
}

# settle_gate SAMPLE_DIR: --settle before the block's first sample: poll every sensor (window/5, 0.1-1 s)
# until each one changed less than settle_mc over the last settle_window_ms, for at most settle_max_ms;
# the record in SAMPLE_DIR/settle (settled 1/0, empty when no sensor was readable; the wait; the last
# window's largest change; every sensor's first and last reading), read by android_snapshots.py.
settle_gate() {
  win=$((SET_settle_window_ms / 10))
  most=$((SET_settle_max_ms / 10))
  poll=$((SET_settle_window_ms / 5))
  [ "$poll" -gt 1000 ] && poll=1000
  [ "$poll" -lt 100 ] && poll=100
  pause=$((poll / 1000)).$((poll % 1000 / 100))$((poll % 100 / 10))$((poll % 10))
  log="$1/settle.log"
  : > "$log"
  c0=$(now_cs)
  settled=0
  span=
  last=0
  while :; do
    now=$(( $(now_cs) - c0 ))
    settle_sensors | while read -r nm mc; do echo "$now $nm $mc"; done >> "$log"
    if [ ! -s "$log" ]; then
      echo "EDGEFARM NOTE warning: no temperature sensor readable, --settle is not applied"
      settled=
      break
    fi
    last=$now
    if [ "$now" -ge "$win" ]; then
      span=$(settle_span "$log" $((now - win)))
      [ "$span" -lt "$SET_settle_mc" ] && { settled=1; break; }
    fi
    [ "$now" -ge "$most" ] && break
    sleep "$pause"
  done
  read -r first _ < "$log" 2>/dev/null
  {
    echo "settled=$settled"
    echo "waited_ms=$((last * 10))"
    echo "span_mc=$span"
    echo "limit_mc=$SET_settle_mc"
    echo "window_ms=$SET_settle_window_ms"
    echo "max_ms=$SET_settle_max_ms"
    while read -r cs nm mc; do
      [ "$cs" = "$first" ] && echo "start $nm $mc"
      [ "$cs" = "$last" ] && echo "end $nm $mc"
    done < "$log"
  } > "$1/settle" 2>/dev/null
  [ "$settled" = 0 ] &&
    echo "EDGEFARM NOTE warning: temperatures still changing by $((span / 1000)).$((span % 1000 / 100)) C over $((SET_settle_window_ms / 1000)) s after $((last / 100)) s: measured unsettled"
  return 0
}

# hook SAMPLE_DIR before|after: before a sample, the settle gate once per block (the job's settings:
# settle_mc, empty for none; JOB/settled marks it done, removed when the driver starts), then the
# cooldown gate (cooldown_mc, empty for none, for at most cooldown_max_ms) writing cooldown_ms; then a
# snapshot of battery and thermal state.
hook() {
  S=$1
  PHASE=$2
  [ -d "$S" ] || return 0
  if [ "$PHASE" = before ]; then
    rm -f "$S/cooldown_ms" "$S/settle"
    JOBDIR=${S%/samples/*}
    SET_cooldown_mc=; SET_cooldown_max_ms=; SET_settle_mc=
    read_settings "$JOBDIR/settings" ||
      echo "EDGEFARM NOTE warning: no readable settings file in the job folder: no cooldown gate"
    if digits "$SET_settle_mc" && digits "$SET_settle_window_ms" && digits "$SET_settle_max_ms" &&
      [ ! -f "$JOBDIR/settled" ]; then
      : > "$JOBDIR/settled"
      settle_gate "$S"
    fi
    limit=; max_s=120
    digits "$SET_cooldown_mc" && limit=$((SET_cooldown_mc / 100))  # tenths of a degree, as the battery says
    digits "$SET_cooldown_max_ms" && max_s=$((SET_cooldown_max_ms / 1000))
    if [ -n "$limit" ] && [ ! -f "$JOBDIR/no_battery_sensor" ]; then
      c0=$(now_cs)
      while :; do
        t=$(battery_tenths)
        if [ -z "$t" ]; then
          : > "$JOBDIR/no_battery_sensor"
          echo "EDGEFARM NOTE warning: no battery temperature readable, --cooldown-c is not applied"
          break
        fi
        waited=$(( $(now_cs) - c0 ))
        if [ "$t" -le "$limit" ] || [ "$waited" -ge $((max_s * 100)) ]; then
          echo "$((waited * 10))" > "$S/cooldown_ms"
          [ "$t" -le "$limit" ] || echo "EDGEFARM NOTE warning: battery still at $((t / 10)).$((t % 10)) C after $max_s s"
          break
        fi
        sleep 1
      done
    fi
  fi
  snapshot battery "$S/battery_$PHASE"
  snapshot thermalservice "$S/thermal_$PHASE"
  if [ "$PHASE" = after ]; then  # clocks where readable (--sustain follows them): CPU kHz and its cap, GPU Hz
    first_lines /sys/devices/system/cpu/cpufreq/policy*/scaling_cur_freq > "$S/cpufreq_after" 2>/dev/null
    first_lines /sys/devices/system/cpu/cpufreq/policy*/scaling_max_freq > "$S/cpucap_after" 2>/dev/null
    first_lines /sys/class/kgsl/kgsl-3d0/gpuclk /sys/class/devfreq/*gpu*/cur_freq > "$S/gpufreq_after" 2>/dev/null
  fi
  return 0
}

# first_lines FILE...: the first line of each readable file (sysfs values), read by the shell itself:
# the hook runs twice per sample, and a `cat` there was two processes more per sample on the phone.
first_lines() {
  for f in "$@"; do
    v=
    [ -r "$f" ] && { read -r v < "$f" || [ -n "$v" ]; } && printf '%s\n' "$v"
  done
  return 0
}

# snapshot SERVICE FILE: `dumpsys SERVICE` into FILE, the write checked: one the storage refused (a full
# phone) is a NOTE rather than a row silently without its snapshot. An empty output is written as empty.
snapshot() {
  out=$(dumpsys "$1" 2>/dev/null)
  if ! { [ -z "$out" ] || printf '%s\n' "$out"; } > "$2" 2>/dev/null; then
    d=${2%/*}
    echo "EDGEFARM NOTE warning: the $1 snapshot of sample ${d##*/} could not be written (storage full?)"
  fi
  return 0
}

# One trace line: centiseconds VmRSS VmHWM VmSwap RssAnon RssFile (kB); nothing once the process is gone.
sample_status() {
  rss=; hwm=; swap=; anon=; file=
  { while read -r key val _; do
      case "$key" in
        VmRSS:) rss=$val ;;
        VmHWM:) hwm=$val ;;
        VmSwap:) swap=$val ;;
        RssAnon:) anon=$val ;;
        RssFile:) file=$val ;;
      esac
    done < "/proc/$1/status"; } 2>/dev/null || return 0
  [ -n "$rss" ] && printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(now_cs)" "$rss" "$hwm" "${swap:-0}" "${anon:-}" "${file:-}"
}

# Where the battery's current can be read: current_now, else current_avg ("" when neither is).
power_current_file() {
  [ -r "$POWER_DIR/voltage_now" ] || return 0
  for f in current_now current_avg; do
    if [ -r "$POWER_DIR/$f" ] && read -r _ < "$POWER_DIR/$f" 2>/dev/null; then
      echo "$POWER_DIR/$f"
      return 0
    fi
  done
}

# One power line: centiseconds current voltage status (raw, as the files say; the host converts).
sample_power() {
  [ -n "$1" ] || return 0
  i=; v=; st=
  read -r i _ < "$1" 2>/dev/null
  read -r v _ < "$POWER_DIR/voltage_now" 2>/dev/null
  read -r st _ < "$POWER_DIR/status" 2>/dev/null
  [ -n "$i" ] && [ -n "$v" ] && printf '%s\t%s\t%s\t%s\n' "$(now_cs)" "$i" "$v" "${st:-}"
}

# Flags file -> positional parameters appended to "$@" (one flag per line; no word splitting).
read_flags_into() {
  [ -f "$1" ] || return 0
  while IFS= read -r f || [ -n "$f" ]; do
    [ -n "$f" ] && FLAGS_N=$((FLAGS_N + 1)) && eval "FLAG_$FLAGS_N=\$f"
  done < "$1"
}

# add_common FLAG: one more of upstream's common flags (COMMON_1..COMMON_N; no word splitting).
add_common() {
  COMMON_N=$((COMMON_N + 1))
  eval "COMMON_$COMMON_N=\$1"
}

start_job() {
  JOB=$1
  WORKER_BIN=$2
  LIBS=$3
  [ -n "$JOB" ] && [ -d "$JOB" ] || fatal "usage: driver.sh $MODE JOB_DIR RUNNER LIB_DIR"
  read_settings "$JOB/settings" || fatal "no settings file in $JOB (the host writes it with the job: rerun)"
  digits "$SET_sample_timeout_ms" || fatal "settings: sample_timeout_ms is not a whole number"
  # a push keeps the host file's mode; a binary that arrived without x (or lost it) gets it here
  [ -x "$WORKER_BIN" ] || chmod 755 "$WORKER_BIN" 2>/dev/null
  [ -x "$WORKER_BIN" ] || FATAL_RC=3 fatal "runner binary missing or not executable (is /data/local/tmp mounted noexec?): $WORKER_BIN"
  if [ -n "$LIBS" ]; then
    LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
  fi
  LOCK="$JOB/driver.pid"
  stop_job "$JOB" "${WORKER_BIN##*/}"
  rm -f "$JOB/settled"  # a new block: --settle's gate runs before its first sample
  echo "$$" > "$LOCK" || FATAL_RC=3 fatal "cannot write $LOCK (storage full or read-only?)"
  echo "EDGEFARM DRIVER $$"
}

# ---------------------------------------------------------------- native: one load per run
run_native() {
  start_job "$@"
  RUNNER=$WORKER_BIN
  source_of_samples="--job"
  samples="$JOB/job.conv"
  if [ "$MODE" = serve ]; then
    source_of_samples="--serve"
    samples="$JOB/requests"
    mkdir -p "$samples" && rm -f "$samples/stop"
  fi
  set -- --settings "$JOB/settings" "$source_of_samples" "$samples" --results "$JOB/results.jsonl" --state-dir "$JOB" \
    --hook "$JOB/../../../driver/driver.sh"
  # the hook's longest wait: the settle gate once, a cooldown, and the snapshots
  hook_s=600
  digits "$SET_settle_max_ms" && hook_s=$((hook_s + SET_settle_max_ms / 1000))
  digits "$SET_cooldown_max_ms" && hook_s=$((hook_s + SET_cooldown_max_ms / 1000))
  set -- "$@" --hook-timeout-s "$hook_s"
  [ -n "$(power_current_file)" ] && set -- "$@" --power-dir "$POWER_DIR"
  starts=0
  while :; do
    rm -f "$JOB/inflight"
    "$RUNNER" "$@" 2>> "$JOB/runner.log" &
    rpid=$!
    echo "$$ $rpid" > "$LOCK"
    wait "$rpid"
    rc=$?
    starts=$((starts + 1))
    [ "$rc" = 0 ] && break
    [ "$rc" = "$TIMEOUT_RC" ] && continue  # the runner recorded the timed-out sample itself
    n=
    [ -f "$JOB/inflight" ] && read -r n _ < "$JOB/inflight"
    if [ -z "$n" ]; then
      # died before a sample started: the model or the runtime cannot load; nothing would get further
      echo "EDGEFARM FATAL runner exited with status $rc before running a sample"
      rm -f "$LOCK"
      exit "$rc"
    fi
    if ! grep -q "^{\"n\":$n," "$JOB/results.jsonl" 2>/dev/null; then
      line="{\"n\":$n,\"status\":\"died\",\"exit_code\":$rc,\"pid\":$rpid}"
      echo "$line" >> "$JOB/results.jsonl" ||
        echo "EDGEFARM NOTE warning: the results file refused sample $n's line (storage full?)"
      echo "EDGEFARM RESULT $line"
    fi
    echo "EDGEFARM NOTE runner restarted after exit status $rc on sample $n"
    [ "$starts" -gt 1000 ] && break
  done
  rm -f "$LOCK" "$JOB/inflight"
  echo "EDGEFARM DRIVER_DONE"
}

# ---------------------------------------------------------------- upstream: one process per sample
is_done() {
  grep -q "^$1$TAB" "$DONE" 2>/dev/null
}

run_upstream() {
  start_job "$@"
  BIN=$WORKER_BIN
  DONE="$JOB/done.tsv"
  : >> "$DONE"
  PCUR=$(power_current_file)
  # the run's settings in upstream's flags (google-ai-edge/LiteRT-LM runtime/engine/litert_lm_advanced_main.cc)
  COMMON_N=0
  add_common "--model_path=$SET_model"
  add_common "--backend=$SET_backend"
  add_common "--cache_dir=$SET_cache_dir"
  [ -n "$SET_vision_backend" ] && add_common "--vision_backend=$SET_vision_backend"
  [ -n "$SET_audio_backend" ] && add_common "--audio_backend=$SET_audio_backend"
  digits "$SET_threads" && [ "$SET_threads" -gt 0 ] && add_common "--num_cpu_threads=$SET_threads"
  digits "$SET_max_num_tokens" && [ "$SET_max_num_tokens" -gt 0 ] && add_common "--max_num_tokens=$SET_max_num_tokens"
  while IFS="$TAB" read -r n multi _ <&3; do
    [ -z "$n" ] && continue
    is_done "$n" && continue
    S="$JOB/samples/$n"
    [ -d "$S" ] || { printf '%s\t%s\t0\n' "$n" 127 >> "$DONE"; continue; }
    echo "EDGEFARM BEGIN $n"
    hook "$S" before
    : > "$S/trace.tsv"
    set --
    i=1
    while [ "$i" -le "$COMMON_N" ]; do
      eval "set -- \"\$@\" \"\$COMMON_$i\""
      i=$((i + 1))
    done
    FLAGS_N=0
    read_flags_into "$S/flags"
    i=1
    while [ "$i" -le "$FLAGS_N" ]; do
      eval "set -- \"\$@\" \"\$FLAG_$i\""
      i=$((i + 1))
    done
    set -- "$@" --benchmark --async=false --report_peak_memory_footprint
    if [ "$multi" = 1 ]; then
      set -- "$@" --multi_turns
      input="$S/turns.txt"
    else
      set -- "$@" "--input_prompt_file=$S/prompt.txt"
      input=/dev/null
    fi
    : > "$S/power.tsv"
    [ -n "$PCUR" ] && echo "source ${PCUR##*/}" > "$S/power.tsv"
    t0=$(now_cs)
    sample_power "$PCUR" >> "$S/power.tsv"
    "$BIN" "$@" < "$input" > "$S/stdout" 2> "$S/stderr" &
    bpid=$!
    echo "$$ $bpid" > "$LOCK"
    echo "$bpid" > "$S/pid"  # the host looks for the low-memory killer's record of this pid after a SIGKILL
    limit=$((SET_sample_timeout_ms / 10))  # centiseconds
    timed_out=
    while kill -0 "$bpid" 2>/dev/null; do
      sample_status "$bpid" >> "$S/trace.tsv"
      sample_power "$PCUR" >> "$S/power.tsv"
      if [ $(( $(now_cs) - t0 )) -ge "$limit" ]; then
        kill -9 "$bpid" 2>/dev/null  # our own deadline: no `timeout` wrapper that may not pass signals on
        timed_out=1
      fi
      sleep "$INTERVAL"
    done
    wait "$bpid"
    rc=$?
    sample_power "$PCUR" >> "$S/power.tsv"
    [ -n "$timed_out" ] && rc=$TIMEOUT_RC
    wall_ms=$(( ($(now_cs) - t0) * 10 ))
    hook "$S" after
    printf '%s\t%s\t%s\n' "$n" "$rc" "$wall_ms" >> "$DONE" ||
      echo "EDGEFARM NOTE warning: done.tsv refused sample $n's line (storage full?)"
    echo "EDGEFARM END $n $rc $wall_ms"
  done 3< "$JOB/index.tsv"
  rm -f "$LOCK"
  echo "EDGEFARM DRIVER_DONE"
}

case "$MODE" in
  native|serve) shift; run_native "$@" ;;
  upstream) shift; run_upstream "$@" ;;
  hook) shift; hook "$@" ;;
  stop) shift; stop_job "$1" "${2:-.}" ;;
  *) fatal "usage: driver.sh native|serve|upstream|hook|stop ..." ;;
esac
