#!/usr/bin/env bash
# Makes sure the local PostgreSQL, MariaDB and Redis answer (starting any that is down) and that the
# `test` database the suite's default URLs name exists on both database servers. Exits 1 if any is missing.
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
    postgres) pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start ;;
    mysql)
      # /run is a tmpfs: the socket and pid directory are gone after a reboot. my.cnf sets user = mysql.
      mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
      start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd ;;
    redis)
      mkdir -p /var/lib/redis /var/log/redis
      redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log ;;
  esac
}
ensure_test_database() {
  case "$1" in
    postgres)
      psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" 2>/dev/null | grep -q 1 ||
        psql -h 127.0.0.1 -U postgres -qc 'CREATE DATABASE test' ;;
    mysql) mariadb -h 127.0.0.1 -P 3306 -u root -e 'CREATE DATABASE IF NOT EXISTS test' ;;
    redis) true ;;
  esac
}
status=0
for svc in postgres mysql redis; do
  if ! answers "$svc"; then
    echo "$svc does not answer; starting it" >&2
    log=$(start "$svc" 2>&1) || echo "$log" | tail -5 >&2
    for _ in $(seq 1 30); do answers "$svc" && break; sleep 1; done
    if answers "$svc"; then echo "$svc is up" >&2; else echo "$svc could not be started" >&2; status=1; continue; fi
  fi
  ensure_test_database "$svc" || { echo "$svc: could not create the test database" >&2; status=1; }
done
exit $status
