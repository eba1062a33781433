#!/usr/bin/env bash
# Makes sure the local PostgreSQL, MariaDB and Redis answer, starting any that is down.
set -u
answers() {
  case "$1" in
    postgres) pg_isready -h 127.0.0.1 -p 5432 -q ;;
    mysql) mariadb-admin -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1 || mysqladmin -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1 ;;
    redis) redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG ;;
  esac
}
start() {
  case "$1" in
    postgres) pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start ;;
    mysql) start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd ;;
    redis) redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log ;;
  esac
}
status=0
for svc in postgres mysql redis; do
  if answers "$svc"; then continue; fi
  echo "$svc does not answer; starting it" >&2
  start "$svc" >/dev/null 2>&1 || true
  for _ in $(seq 1 30); do answers "$svc" && break; sleep 1; done
  if answers "$svc"; then echo "$svc is up" >&2; else echo "$svc could not be started" >&2; status=1; fi
done
exit $status
