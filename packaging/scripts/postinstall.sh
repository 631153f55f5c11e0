#!/bin/sh
# Creates the system user the units run as, and lets it read /etc/heureka.
set -e
if ! getent group heureka >/dev/null; then
	groupadd --system heureka
fi
if ! getent passwd heureka >/dev/null; then
	useradd --system --gid heureka --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin --comment "heureka service registry" heureka
fi
chown root:heureka /etc/heureka
chmod 0750 /etc/heureka
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
