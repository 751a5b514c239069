#!/usr/bin/env bash
# A consistent copy of musbot's Redis (its append-only file) into BACKUP_DIR, the old copies pruned.
#
#   deploy/backup.sh                      # a host Redis (redis-cli on PATH, default host and port)
#   REDIS_CLI_ARGS="-s /var/lib/musbot/data/redis.sock" deploy/backup.sh     # the embedded server
#   COMPOSE="docker compose -f deploy/compose.yaml" deploy/backup.sh          # the Compose service `redis`
#
# Settings (environment): BACKUP_DIR (default /var/backups/musbot), KEEP_DAYS (14: older copies are
# deleted), REDIS_CLI (default redis-cli), REDIS_CLI_ARGS (how to reach Redis: -h/-p/-a/-s), COMPOSE (run
# redis-cli and tar inside the Compose service `redis` instead).
#
# How: compact the AOF (BGREWRITEAOF) and wait for the rewrite to end, hold automatic rewrites off, copy the
# AOF (Redis 7: the directory appendonlydir; Redis 6 and the embedded server: appendonly.aof) into a dated
# .tar.gz written under a temporary name and renamed when complete, then restore the rewrite setting — on
# every exit, a failure or Ctrl-C included (a trap), so AOF rewrites never stay off. Restore: see
# deploy/README.md ("Backup and restore"). Exit status: 0 on success, 1 when a step failed (said on stderr).
set -euo pipefail

BACKUP_DIR=${BACKUP_DIR:-/var/backups/musbot}
KEEP_DAYS=${KEEP_DAYS:-14}
REDIS_CLI=${REDIS_CLI:-redis-cli}
REDIS_CLI_ARGS=${REDIS_CLI_ARGS:-}
COMPOSE=${COMPOSE:-}
REWRITE_TIMEOUT=${REWRITE_TIMEOUT:-600}

fail() { echo "backup: $*" >&2; exit 1; }

cli() {  # cli ARGS...: one redis-cli call, its raw output
    if [[ -n "$COMPOSE" ]]; then
        # shellcheck disable=SC2086
        $COMPOSE exec -T redis redis-cli --raw "$@"
    else
        # shellcheck disable=SC2086
        "$REDIS_CLI" $REDIS_CLI_ARGS --raw "$@"
    fi
}

in_redis_dir() {  # in_redis_dir DIR COMMAND...: run a command where the AOF lives
    local dir=$1
    shift
    if [[ -n "$COMPOSE" ]]; then
        $COMPOSE exec -T redis sh -c "cd '$dir' && $*"
    else
        (cd "$dir" && sh -c "$*")
    fi
}

config() { cli CONFIG GET "$1" | sed -n 2p; }

pong=$(cli PING 2>&1) || fail "Redis does not answer: $pong"
[[ "$pong" == PONG ]] || fail "Redis does not answer: $pong"
[[ "$(config appendonly)" == yes ]] || fail "Redis keeps no append-only file (appendonly no): nothing to copy"
dir=$(config dir)
aof_file=$(config appendfilename)
aof_dir=$(config appenddirname)  # empty before Redis 7
rewrite=$(config auto-aof-rewrite-percentage)

restore_rewrites() { cli CONFIG SET auto-aof-rewrite-percentage "$rewrite" >/dev/null || \
    echo "backup: could not set auto-aof-rewrite-percentage back to $rewrite: do it by hand" >&2; }
trap restore_rewrites EXIT

# Hold automatic rewrites off first, so that none starts between our rewrite's end and the copy.
cli CONFIG SET auto-aof-rewrite-percentage 0 >/dev/null
mkdir -p "$BACKUP_DIR" 2>/dev/null || fail "cannot create BACKUP_DIR ($BACKUP_DIR)"
cli BGREWRITEAOF >/dev/null || true  # "already in progress" is as good
waited=0
rewriting() { local info; info=$(cli INFO persistence); grep -Eq '^aof_rewrite_(in_progress|scheduled):1' <<<"$info"; }
while rewriting; do
    ((waited < REWRITE_TIMEOUT)) || fail "the AOF rewrite did not end within ${REWRITE_TIMEOUT} s"
    sleep 1
    waited=$((waited + 1))
done

what=$aof_file
if [[ -n "$aof_dir" ]] && in_redis_dir "$dir" "test -d '$aof_dir'"; then
    what=$aof_dir
fi
name="musbot-redis-$(date +%Y-%m-%d-%H%M%S).tar.gz"
partial="$BACKUP_DIR/.$name.partial"
in_redis_dir "$dir" "tar -cf - '$what'" | gzip >"$partial" || { rm -f "$partial"; fail "copying $dir/$what failed"; }
mv "$partial" "$BACKUP_DIR/$name"
echo "backup: $BACKUP_DIR/$name ($(du -h "$BACKUP_DIR/$name" | cut -f1))"

find "$BACKUP_DIR" -maxdepth 1 -name 'musbot-redis-*.tar.gz' -mtime "+$KEEP_DAYS" -print -delete | \
    sed 's/^/backup: pruned /'
