#!/system/bin/sh
# edgefarm on-phone driver: runs litert_lm_advanced_main once per sample. POSIX sh (Android mksh/toybox,
# tested under dash in the lab).
#
#   sh driver.sh JOB_DIR BINARY TIMEOUT_S [LIB_DIR]
#
# The host renders everything as files, so no prompt, id or dataset text is ever on a command line:
#   JOB_DIR/index.tsv           n<TAB>max_output_tokens<TAB>multi(0|1), one line per sample
#   JOB_DIR/common_flags        flags for every sample (model, backend, threads, cache), one per line
#   JOB_DIR/samples/N/prompt.txt   the prompt, media inline as [image:/abs] / [audio:/abs]
#   JOB_DIR/samples/N/turns.txt    multi-turn samples: one turn per line, fed on stdin (--multi_turns)
#   JOB_DIR/samples/N/flags        extra per-sample flags from the host's allow-list, one per line
# Per sample it writes samples/N/{stdout,stderr,trace.tsv,battery_before,battery_after,
# thermal_before,thermal_after} and appends `N<TAB>rc<TAB>wall_ms<TAB>started_uptime_ms` to
# done.tsv (one write per line, so a rerun resumes after the last finished sample).
# Progress on stdout: `EDGEFARM BEGIN N` / `EDGEFARM END N RC WALL_MS`.

JOB=$1
BIN=$2
TIMEOUT_S=${3:-300}
LIBS=$4
INTERVAL=${EDGEFARM_TRACE_INTERVAL:-0.1}

if [ -z "$JOB" ] || [ -z "$BIN" ] || [ ! -f "$JOB/index.tsv" ]; then
  echo "EDGEFARM FATAL usage: driver.sh JOB_DIR BINARY TIMEOUT_S [LIB_DIR]" >&2
  exit 2
fi
if [ ! -x "$BIN" ]; then
  echo "EDGEFARM FATAL runner binary missing or not executable: $BIN" >&2
  exit 3
fi
if [ -n "$LIBS" ]; then
  LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
fi
DONE="$JOB/done.tsv"
touch "$DONE"
TAB=$(printf '\t')

uptime_ms() {
  # /proc/uptime is "12345.67 ..." (centiseconds); no `date +%N` needed
  read -r up _ < /proc/uptime
  s=${up%.*}
  c=${up#*.}
  echo $((s * 1000 + ${c#0} * 10))
}

is_done() {
  grep -q "^$1$TAB" "$DONE" 2>/dev/null
}

# Echo the first child of pid $1 (the binary under `timeout`); empty when it has none (yet).
child_of() {
  if command -v pgrep >/dev/null 2>&1; then
    pgrep -P "$1" 2>/dev/null | head -n 1
    return
  fi
  for st in /proc/[0-9]*/status; do
    while read -r key val _; do
      if [ "$key" = "PPid:" ]; then
        if [ "$val" = "$1" ]; then
          d=${st%/status}
          echo "${d#/proc/}"
          return
        fi
        break
      fi
    done < "$st" 2>/dev/null
  done
}

# One trace line: uptime_ms VmRSS VmHWM VmSwap RssAnon RssFile (kB); nothing once the process is gone.
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
  [ -n "$rss" ] && printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(uptime_ms)" "$rss" "$hwm" "${swap:-0}" "${anon:-}" "${file:-}"
}

# Battery temperature in tenths of a degree C (dumpsys battery `temperature: 312`); empty if unknown.
battery_tenths() {
  dumpsys battery 2>/dev/null | while IFS=: read -r key val; do
    case "$key" in
      *temperature)
        v=$(echo $val)
        case "$v" in ''|*[!0-9-]*) ;; *) echo "$v"; break ;; esac ;;
    esac
  done
}

# --cooldown-c: JOB/cooldown holds "LIMIT_TENTHS MAX_WAIT_S" (or "off"). Waits before a sample until
# the battery is at or below the limit, at most MAX_WAIT_S; writes the wait (ms) to $1/cooldown_ms.
COOL_LIMIT=; COOL_MAX_S=; COOL_SENSOR=1
[ -f "$JOB/cooldown" ] && read -r COOL_LIMIT COOL_MAX_S _ < "$JOB/cooldown"
case "$COOL_LIMIT" in ''|*[!0-9-]*) COOL_LIMIT= ;; esac
cool_down() {
  [ -n "$COOL_LIMIT" ] && [ "$COOL_SENSOR" = 1 ] || return 0
  c0=$(uptime_ms)
  while :; do
    t=$(battery_tenths)
    if [ -z "$t" ]; then
      COOL_SENSOR=0
      echo "EDGEFARM NOTE warning: no battery temperature readable, --cooldown-c is not applied"
      return 0
    fi
    waited=$(( $(uptime_ms) - c0 ))
    if [ "$t" -le "$COOL_LIMIT" ] || [ "$waited" -ge $((COOL_MAX_S * 1000)) ]; then
      echo "$waited" > "$1/cooldown_ms"
      [ "$t" -le "$COOL_LIMIT" ] || echo "EDGEFARM NOTE warning: battery still at $((t / 10)).$((t % 10)) C after ${COOL_MAX_S} s"
      return 0
    fi
    sleep 1
  done
}

snapshot() {
  dumpsys battery > "$1/battery_$2" 2>/dev/null
  dumpsys thermalservice > "$1/thermal_$2" 2>/dev/null
}

# One driver per job: a driver left running on the phone by a lost connection is stopped first
# (with the binary it was running), so a resumed run never does the same work twice. driver.pid
# holds "driver_pid timeout_pid"; the pid must still be a driver.sh (pids get reused).
LOCK="$JOB/driver.pid"
if [ -f "$LOCK" ]; then
  read -r old_pid old_tpid _ < "$LOCK"
  if [ -n "$old_pid" ] && [ "$old_pid" != "$$" ] && kill -0 "$old_pid" 2>/dev/null \
     && grep -q driver.sh "/proc/$old_pid/cmdline" 2>/dev/null; then
    kill "$old_pid" 2>/dev/null
    [ -n "$old_tpid" ] && kill "$old_tpid" 2>/dev/null
    echo "EDGEFARM NOTE stopped an earlier driver (pid $old_pid) still running this job"
  fi
fi
echo "$$" > "$LOCK"

echo "EDGEFARM DRIVER $$"
while IFS="$TAB" read -r n max_out multi _ <&3; do
  [ -z "$n" ] && continue
  is_done "$n" && continue
  S="$JOB/samples/$n"
  [ -d "$S" ] || { printf '%s\t%s\t0\t0\n' "$n" 127 >> "$DONE"; continue; }
  echo "EDGEFARM BEGIN $n"
  rm -f "$S/cooldown_ms"
  cool_down "$S"
  snapshot "$S" before
  : > "$S/trace.tsv"
  set --
  while IFS= read -r f || [ -n "$f" ]; do
    [ -n "$f" ] && set -- "$@" "$f"
  done < "$JOB/common_flags"
  if [ -f "$S/flags" ]; then
    while IFS= read -r f || [ -n "$f" ]; do
      [ -n "$f" ] && set -- "$@" "$f"
    done < "$S/flags"
  fi
  set -- "$@" "--max_output_tokens=$max_out" --benchmark --async=false --report_peak_memory_footprint
  if [ "$multi" = 1 ]; then
    set -- "$@" --multi_turns
    input="$S/turns.txt"
  else
    set -- "$@" "--input_prompt_file=$S/prompt.txt"
    input=/dev/null
  fi
  t0=$(uptime_ms)
  timeout "$TIMEOUT_S" "$BIN" "$@" < "$input" > "$S/stdout" 2> "$S/stderr" &
  tpid=$!
  echo "$$ $tpid" > "$LOCK"
  cpid=
  while kill -0 "$tpid" 2>/dev/null; do
    [ -z "$cpid" ] && cpid=$(child_of "$tpid")
    [ -n "$cpid" ] && sample_status "$cpid" >> "$S/trace.tsv"
    sleep "$INTERVAL"
  done
  wait "$tpid"
  rc=$?
  t1=$(uptime_ms)
  snapshot "$S" after
  printf '%s\t%s\t%s\t%s\n' "$n" "$rc" "$((t1 - t0))" "$t0" >> "$DONE"
  echo "EDGEFARM END $n $rc $((t1 - t0))"
done 3< "$JOB/index.tsv"
rm -f "$LOCK"
echo "EDGEFARM DRIVER_DONE"
