#!/usr/bin/env bash
# try-spring.sh — docs/spring.md's quick start, followed as a new user would, for real (opt-in; not part of
# ./mvnw verify: it downloads Spring Boot's parent and plugins the first time).
#
#   scripts/try-spring.sh [3.5|4.0 ...]     default: both Boot lines, one after the other
#
# For each Boot line it
#   1. installs Rota's artifacts (parent, SDK, shaded SDK, starter) into a fresh local repository
#      $WORK/repo — never ~/.m2, which is only read, as a tail (-Dmaven.repo.local.tail) for what it holds;
#   2. writes a new project in $WORK/app-<line>: spring-boot-starter-parent, spring-boot-starter and
#      rota-spring-boot-starter, the quick start's @SingletonJob class and application.yml — and nothing
#      else (no Netty BOM, no slf4j binding of its own);
#   3. builds it with the Maven wrapper into a runnable jar (Boot's repackage), against $WORK/repo only;
#   4. starts a three-member cluster (scripts/cluster.sh, ROTA_BASE_PORT, data in $WORK/cluster) and two
#      instances of the jar, waits for FIRE_TIMES fire times and checks that each ran on exactly one instance
#      and that no class clash or slf4j warning was printed; then stops everything it started, by PID.
#
# Environment: ROTA_BASE_PORT (default 7400: not the default cluster's 7000), ROTA_TRY_DIR (default a new
# directory under ${TMPDIR:-/tmp}; kept for reading), FIRE_TIMES (default 3), ROTA_TRY_TIMEOUT_S (default 300:
# the instances' start and the runs), MVN_OFFLINE=1 to build offline
# (then everything Boot needs must already be in ~/.m2), ROTA_TRY_REUSE=1 with ROTA_TRY_DIR to reuse the Rota
# artifacts an earlier run installed there (no rebuild). Versions: BOOT35 (3.5.7), BOOT40 (4.0.7).
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BASE="${ROTA_BASE_PORT:-7400}"
WORK="${ROTA_TRY_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rota-try-spring.XXXXXX")}"
FIRE_TIMES="${FIRE_TIMES:-3}"
TIMEOUT_S="${ROTA_TRY_TIMEOUT_S:-300}"   # instances up and FIRE_TIMES runs; a loaded machine starts Spring slowly
BOOT35="${BOOT35:-3.5.7}"
BOOT40="${BOOT40:-4.0.7}"
REPO="$WORK/repo"
TAIL="${HOME}/.m2/repository"
OFFLINE=(); [[ "${MVN_OFFLINE:-}" == 1 ]] && OFFLINE=(-o)
LINES=("$@"); ((${#LINES[@]})) || LINES=(3.5 4.0)
ROTA_VERSION="$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$ROOT/pom.xml" | head -n 1)"
APP_PIDS=()

die() { echo "try-spring.sh: $*" >&2; exit 1; }
step() { echo; echo "== $*"; }
mvn_repo() { "$@" -Dmaven.repo.local="$REPO" -Dmaven.repo.local.tail="$TAIL"; }

cleanup() {
  local pid
  for pid in "${APP_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${APP_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -f "$WORK/cluster/cluster.env" ]]; then
    ROTA_CLUSTER_DIR="$WORK/cluster" ROTA_BASE_PORT="$BASE" "$ROOT/scripts/cluster.sh" stop >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

for line in "${LINES[@]}"; do [[ "$line" == 3.5 || "$line" == 4.0 ]] || die "a Boot line is 3.5 or 4.0 (got '$line')"; done
mkdir -p "$WORK"
echo "working in $WORK (Rota $ROTA_VERSION, cluster ports $((BASE + 1))-$((BASE + 3)))"

starter_pom="$REPO/io/rota/rota-spring-boot-starter/$ROTA_VERSION/rota-spring-boot-starter-$ROTA_VERSION.pom"
shaded_pom="$REPO/io/rota/rota-client-shaded/$ROTA_VERSION/rota-client-shaded-$ROTA_VERSION.pom"
if [[ "${ROTA_TRY_REUSE:-}" == 1 && -f "$starter_pom" && -f "$shaded_pom" ]]; then
  step "1. reuse Rota's artifacts in $REPO (ROTA_TRY_REUSE=1: installed by an earlier run, not rebuilt)"
else
  step "1. install Rota's artifacts into $REPO (the reactor's tests skipped: ./mvnw verify runs them)"
  (cd "$ROOT" && mvn_repo ./mvnw -q -B "${OFFLINE[@]}" install -DskipTests -pl sdk/spring-boot-starter,kv-server/server -am) \
    >"$WORK/install.log" 2>&1 || { tail -n 40 "$WORK/install.log"; die "installing Rota failed: $WORK/install.log"; }
fi
[[ -f "$starter_pom" && -f "$shaded_pom" ]] || die "the starter or the shaded SDK is not in $REPO"
# What a user's build resolves: the installed shaded POM is the dependency-reduced one. Its project-level
# dependencies (artifactId:scope, exclusions ignored) other than test ones must be slf4j-api alone.
shaded_deps="$(awk '/^  <dependencies>/ { d = 1 } /^  <\/dependencies>/ { d = 0 }
  d && /^      <artifactId>/ { gsub(/.*<artifactId>|<\/artifactId>.*/, ""); a = $0 }
  d && /^      <scope>/ { gsub(/.*<scope>|<\/scope>.*/, ""); s = $0 }
  d && /^    <\/dependency>/ { print a ":" (s == "" ? "compile" : s); a = ""; s = "" }' "$shaded_pom" | grep -v ':test$' || true)"
[[ "$shaded_deps" == "slf4j-api:compile" ]] || die "the installed rota-client-shaded POM should depend on slf4j-api only, not: $shaded_deps"
echo "installed: rota-spring-boot-starter -> rota-client-shaded -> $shaded_deps (Netty and protobuf inside, relocated)"

step "2. start a three-member cluster (data in $WORK/cluster)"
export ROTA_CLUSTER_DIR="$WORK/cluster" ROTA_BASE_PORT="$BASE"
"$ROOT/scripts/cluster.sh" start >"$WORK/cluster-start.log" 2>&1 || { cat "$WORK/cluster-start.log"; die "the cluster did not start"; }
ENDPOINTS="127.0.0.1:$((BASE + 1)),127.0.0.1:$((BASE + 2)),127.0.0.1:$((BASE + 3))"
echo "cluster up: $ENDPOINTS"

# The quick start's project (docs/spring.md "A new project"), with a cron that fires every 5 seconds instead
# of 08:00 so that the try sees runs.
write_project() {
  local app="$1" boot="$2"
  mkdir -p "$app/src/main/java/com/example/reminders" "$app/src/main/resources" "$app/.mvn/wrapper"
  cp "$ROOT/mvnw" "$app/"
  cp "$ROOT/.mvn/wrapper/maven-wrapper.properties" "$app/.mvn/wrapper/"
  cat >"$app/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>org.springframework.boot</groupId>
    <artifactId>spring-boot-starter-parent</artifactId>
    <version>$boot</version>
    <relativePath/>
  </parent>
  <groupId>com.example</groupId>
  <artifactId>reminders</artifactId>
  <version>0.0.1-SNAPSHOT</version>
  <properties>
    <java.version>17</java.version>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter</artifactId>
    </dependency>
    <dependency>
      <groupId>io.rota</groupId>
      <artifactId>rota-spring-boot-starter</artifactId>
      <version>$ROTA_VERSION</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.springframework.boot</groupId>
        <artifactId>spring-boot-maven-plugin</artifactId>
      </plugin>
    </plugins>
  </build>
</project>
EOF
  cat >"$app/src/main/java/com/example/reminders/RemindersApplication.java" <<'EOF'
package com.example.reminders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class RemindersApplication {
    public static void main(String[] args) {
        SpringApplication.run(RemindersApplication.class, args);
    }
}
EOF
  cat >"$app/src/main/java/com/example/reminders/Reminders.java" <<'EOF'
package com.example.reminders;

import io.rota.client.recipes.JobContext;
import io.rota.spring.SingletonJob;
import org.springframework.stereotype.Component;

@Component
class Reminders {

    @SingletonJob(name = "daily-learning-reminder", cron = "*/5 * * * * *", zone = "Europe/Berlin")
    void sendAll(JobContext ctx) {
        // Runs on one instance per fire time. Pass ctx.fencingToken() with every write to the resource,
        // which rejects a token lower than the highest it has seen (FenceGuard, JdbcFencing).
        System.out.println("reminders of " + ctx.fireTime() + ", token " + ctx.fencingToken());
    }
}
EOF
  cat >"$app/src/main/resources/application.yml" <<EOF
rota:
  endpoints: $ENDPOINTS
EOF
}

# Lines "reminders of <fire time>, token N" across the given outputs.
runs_in() { cat "$@" 2>/dev/null | grep -o 'reminders of [^,]*' | sort || true; }

outcome=()
for line in "${LINES[@]}"; do
  if [[ "$line" == 3.5 ]]; then boot="$BOOT35"; else boot="$BOOT40"; fi
  app="$WORK/app-$line"
  step "3. Boot $boot: a new project in $app, built with the wrapper"
  write_project "$app" "$boot"
  if ! (cd "$app" && mvn_repo ./mvnw -q -B "${OFFLINE[@]}" package -DskipTests) >"$app/build.log" 2>&1; then
    tail -n 40 "$app/build.log"
    die "Boot $boot: the new project did not build: $app/build.log"
  fi
  jar="$app/target/reminders-0.0.1-SNAPSHOT.jar"
  [[ -f "$jar" ]] || die "Boot $boot: no $jar"
  echo "built $jar; Netty in it: $(unzip -l "$jar" | grep -o 'BOOT-INF/lib/netty[^ ]*' | tr '\n' ' ' || true)"

  step "4. Boot $boot: two instances (java -jar), $FIRE_TIMES fire times"
  APP_PIDS=()
  for i in 1 2; do
    java -jar "$jar" --rota.instance-id="boot$line-$i" >"$app/instance-$i.log" 2>&1 &
    APP_PIDS+=("$!")
  done
  deadline=$((SECONDS + TIMEOUT_S))
  while (( $(runs_in "$app"/instance-*.log | sort -u | wc -l) < FIRE_TIMES )); do
    for pid in "${APP_PIDS[@]}"; do
      kill -0 "$pid" 2>/dev/null || { tail -n 40 "$app"/instance-*.log; die "Boot $boot: an instance exited"; }
    done
    ((SECONDS < deadline)) || { tail -n 40 "$app"/instance-*.log; die "Boot $boot: fewer than $FIRE_TIMES runs in $TIMEOUT_S s (ROTA_TRY_TIMEOUT_S)"; }
    sleep 1
  done
  for pid in "${APP_PIDS[@]}"; do kill "$pid"; done
  for pid in "${APP_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  APP_PIDS=()

  total="$(runs_in "$app"/instance-*.log | wc -l)"
  distinct="$(runs_in "$app"/instance-*.log | sort -u | wc -l)"
  echo "runs: $total on $distinct fire times (instance 1: $(runs_in "$app/instance-1.log" | wc -l), instance 2: $(runs_in "$app/instance-2.log" | wc -l))"
  grep -h "started singleton job" "$app"/instance-*.log | sed 's/^.*started/  started/' | head -n 2
  ((total == distinct)) || die "Boot $boot: a fire time ran twice: $(runs_in "$app"/instance-*.log | uniq -d | tr '\n' ' ')"
  for bad in NoClassDefFoundError NoSuchMethodError "APPLICATION FAILED TO START" "No SLF4J providers"; do
    if grep -q "$bad" "$app"/instance-*.log; then die "Boot $boot: '$bad' in $app/instance-*.log"; fi
  done
  outcome+=("Boot $boot: OK — built from the quick start, $distinct fire times each run once across two instances")
done

step "outcome"
printf '%s\n' "${outcome[@]}"
echo "projects, logs and the local repository: $WORK (delete it when done). The cluster is stopped on exit."
