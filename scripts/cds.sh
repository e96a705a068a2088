# cds.sh — class-data sharing (AppCDS, JDK 17) for a shaded jar; sourced by scripts/rota and scripts/rotactl.
#
# cds_opts JAR sets CDS_OPTS, the java options for this run:
#   - JAR's archive (the same path, .jsa) exists and is newer than JAR: map it (-XX:SharedArchiveFile), so the
#     JVM starts with the jar's classes already parsed and verified: about 40% less CPU to a serving member;
#   - otherwise this run writes it: the JVM records the classes it loads and dumps them when it exits
#     (-XX:ArchiveClassesAtExit; a normal exit or SIGTERM, not kill -9). One writer at a time: JAR's .jsa.writer
#     holds the writer's PID (this shell's, which exec hands to the JVM); others run without CDS meanwhile.
# A rebuilt jar is newer than its archive, so the next run writes a new one. ROTA_CDS=0 turns all of it off.
cds_opts() {
  local jar="$1" archive="${1%.jar}.jsa" writer
  writer="$archive.writer"
  CDS_OPTS=()
  [[ "${ROTA_CDS:-1}" == 0 ]] && return 0
  # The JVM's own CDS lines (classes it cannot archive, a stale archive it ignores) are not the user's business.
  local quiet=(-Xlog:cds=off -Xlog:cds+dynamic=off)
  if [[ -f "$archive" && "$archive" -nt "$jar" ]]; then
    CDS_OPTS=(-XX:SharedArchiveFile="$archive" "${quiet[@]}")
    return 0
  fi
  if ! (set -C; echo $$ >"$writer") 2>/dev/null; then
    kill -0 "$(cat "$writer" 2>/dev/null)" 2>/dev/null && return 0   # another run is writing it
    rm -f "$writer"                                                  # its writer died first: take over
    (set -C; echo $$ >"$writer") 2>/dev/null || return 0
  fi
  rm -f "$archive"
  CDS_OPTS=(-XX:ArchiveClassesAtExit="$archive" "${quiet[@]}")
}
